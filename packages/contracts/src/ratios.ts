/**
 * Default billing ratios. A model ratio of 1 means $2 per million prompt tokens (500 000 quota
 * units per dollar); the completion ratio multiplies the price of completion tokens; a model
 * price (dollars per call) replaces token billing for that model. Values follow the providers'
 * public list prices. Models missing here are billed per the unknown-model policy of the relay,
 * never with a surprising default.
 */
/**
 * The native providers' current models, [model ratio, completion ratio] (a completion ratio of 0
 * for embeddings and rerank). Prices in yuan are converted at 7.3 per dollar; a free model has
 * ratio 0. Cohere's rerank is billed per search unit (reported as prompt tokens): 1000 is $0.002
 * a search.
 */
const NATIVE_MODELS: Readonly<Record<string, readonly [number, number]>> = {
  // Alibaba DashScope
  'qwen3-max': [0.411, 4], 'qwen-flash': [0.0103, 10], 'qwq-plus': [0.1096, 2.5], 'qwen3-vl-plus': [0.0685, 10],
  'qwen-vl-max': [0.1096, 2.5], 'qwen-vl-plus': [0.0548, 2.5], 'text-embedding-v4': [0.0342, 0], 'text-embedding-v3': [0.0342, 0],
  // Baidu ERNIE
  'ERNIE-4.0-8K': [2.083, 3], 'ERNIE-4.0-Turbo-8K': [1.389, 3], 'ERNIE-4.0-Turbo-128K': [1.389, 3], 'ERNIE-3.5-8K': [0.0556, 2.5],
  'ERNIE-3.5-128K': [0.0556, 2.5], 'ERNIE-Speed-Pro-128K': [0.0208, 2], 'ERNIE-Character-8K': [0.0208, 2], 'ERNIE-Lite-Pro-128K': [0.0139, 2],
  'ERNIE-Speed-8K': [0, 1], 'ERNIE-Speed-128K': [0, 1], 'ERNIE-Lite-8K': [0, 1], 'ERNIE-Tiny-8K': [0, 1],
  'Embedding-V1': [0.0347, 0], 'bge-large-zh': [0.0347, 0], 'bge-large-en': [0.0347, 0], 'tao-8k': [0.0347, 0],
  // Zhipu (ChatGLM, GLM-4V)
  'glm-4.6': [0.139, 4], 'glm-4.5': [0.139, 4], 'glm-4.5-air': [0.0556, 2.5], 'glm-4.5-flash': [0, 1], 'glm-4-plus': [0.347, 1],
  'glm-4-air': [0.0347, 1], 'glm-4-air-250414': [0.0347, 1], 'glm-4-airx': [0.694, 1], 'glm-4-flash': [0, 1], 'glm-4-flash-250414': [0, 1],
  'glm-4-long': [0.0694, 1], 'embedding-3': [0.0347, 0], 'embedding-2': [0.0347, 0],
  'glm-4.6v': [0.0694, 3], 'glm-4.5v': [0.139, 3], 'glm-4.1v-thinking-flash': [0, 1], 'glm-4v-plus-0111': [0.278, 1],
  'glm-4v-plus': [0.278, 1], 'glm-4v-flash': [0, 1], 'glm-4v': [3.47, 1],
  // iFlytek Spark
  'lite': [0, 1], 'generalv3': [0.685, 1], 'pro-128k': [0.685, 1], 'generalv3.5': [1.44, 1], 'max-32k': [1.44, 1], '4.0Ultra': [4.8, 1], 'x1': [1.44, 1],
  // Tencent Hunyuan
  'hunyuan-turbos-latest': [0.0548, 2.5], 'hunyuan-t1-latest': [0.0685, 4], 'hunyuan-lite': [0, 1], 'hunyuan-standard': [0.0548, 2.5],
  'hunyuan-large': [0.274, 3], 'hunyuan-vision': [1.233, 1], 'hunyuan-turbos-vision': [0.205, 3], 'hunyuan-embedding': [0.048, 0],
  // Cohere
  'command-a-03-2025': [1.25, 4], 'command-a-reasoning-08-2025': [1.25, 4], 'command-a-vision-07-2025': [1.25, 4],
  'command-r-plus-08-2024': [1.25, 4], 'command-r-08-2024': [0.075, 4], 'command-r7b-12-2024': [0.01875, 4],
  'embed-v4.0': [0.06, 0], 'embed-multilingual-v3.0': [0.05, 0], 'embed-english-v3.0': [0.05, 0], 'rerank-v3.5': [1000, 0],
  // MiniMax
  'MiniMax-M2.7': [0.15, 4], 'MiniMax-M2.7-highspeed': [0.15, 8], 'MiniMax-M2.5': [0.15, 4], 'MiniMax-M2.5-highspeed': [0.15, 8],
  'MiniMax-M2.1': [0.15, 4], 'MiniMax-M2': [0.15, 4], 'MiniMax-M1': [0.2, 5.5], 'MiniMax-Text-01': [0.1, 5.5],
  // Jina
  'jina-embeddings-v5-text-small': [0.025, 0], 'jina-embeddings-v5-text-nano': [0.025, 0], 'jina-embeddings-v4': [0.025, 0],
  'jina-clip-v2': [0.025, 0], 'jina-reranker-v3': [0.025, 0], 'jina-reranker-m0': [0.025, 0],
  // Cloudflare Workers AI
  '@cf/meta/llama-3.3-70b-instruct-fp8-fast': [0.1465, 7.69], '@cf/meta/llama-4-scout-17b-16e-instruct': [0.135, 3.15],
  '@cf/meta/llama-3.1-8b-instruct': [0.141, 2.93], '@cf/openai/gpt-oss-120b': [0.175, 2.14], '@cf/openai/gpt-oss-20b': [0.1, 1.5],
  '@cf/qwen/qwq-32b': [0.33, 1.52], '@cf/qwen/qwen3-30b-a3b-fp8': [0.0255, 6.57], '@cf/google/gemma-3-12b-it': [0.1725, 1.61],
  '@cf/mistralai/mistral-small-3.1-24b-instruct': [0.1755, 1.58], '@cf/baai/bge-m3': [0.006, 0], '@cf/baai/bge-large-en-v1.5': [0.102, 0],
  // Google (PaLM2's last model; Gemini embeddings)
  'chat-bison-001': [0.25, 1], 'gemini-embedding-001': [0.075, 0],
  // OpenAI models served by Codex subscriptions and the Realtime API
  'gpt-5.6-sol': [2.5, 6], 'gpt-5.6-terra': [1.25, 6], 'gpt-5.6-luna': [0.5, 6], 'gpt-5.5': [2.5, 6], 'gpt-5.4': [1.25, 6],
  'gpt-5.4-mini': [0.375, 6], 'gpt-5.3-codex-spark': [0.875, 8], 'gpt-realtime': [2, 4], 'gpt-realtime-mini': [0.3, 4]
}

export const DEFAULT_MODEL_RATIO: Readonly<Record<string, number>> = {
  'gpt-4o': 1.25,
  'gpt-4o-2024-08-06': 1.25,
  'gpt-4o-2024-11-20': 1.25,
  'gpt-4o-mini': 0.075,
  'gpt-4o-audio-preview': 1.25,
  'gpt-4o-mini-audio-preview': 0.075,
  'gpt-4o-realtime-preview': 2.5,
  'gpt-4o-mini-realtime-preview': 0.3,
  'gpt-4.1': 1,
  'gpt-4.1-mini': 0.2,
  'gpt-4.1-nano': 0.05,
  'gpt-4-turbo': 5,
  'gpt-4': 15,
  'gpt-3.5-turbo': 0.25,
  'gpt-3.5-turbo-0125': 0.25,
  'o1': 7.5,
  'o1-mini': 0.55,
  'o3': 1,
  'o3-mini': 0.55,
  'o4-mini': 0.55,
  'gpt-5': 0.625,
  'gpt-5-mini': 0.125,
  'gpt-5-nano': 0.025,
  'text-embedding-3-small': 0.01,
  'text-embedding-3-large': 0.065,
  'text-embedding-ada-002': 0.05,
  'whisper-1': 15,
  'tts-1': 7.5,
  'tts-1-hd': 15,
  'omni-moderation-latest': 0,
  'claude-3-5-haiku-20241022': 0.4,
  'claude-3-5-sonnet-20241022': 1.5,
  'claude-3-7-sonnet-20250219': 1.5,
  'claude-sonnet-4-20250514': 1.5,
  'claude-sonnet-4-5-20250929': 1.5,
  'claude-opus-4-20250514': 7.5,
  'claude-opus-4-1-20250805': 7.5,
  'claude-haiku-4-5-20251001': 0.5,
  'claude-opus-4-6': 2.5,
  'claude-sonnet-4-6': 1.5,
  'claude-opus-4-5-20251101': 2.5,
  'claude-opus-4-5': 2.5,
  'claude-haiku-4-5': 0.5,
  'claude-sonnet-4-5': 1.5,
  'claude-opus-4-1': 7.5,
  'claude-opus-4-0': 7.5,
  'claude-sonnet-4-0': 1.5,
  'gemini-1.5-flash': 0.0375,
  'gemini-1.5-pro': 0.625,
  'gemini-2.0-flash': 0.05,
  'gemini-2.5-flash': 0.15,
  'gemini-2.5-pro': 0.625,
  'gemini-2.5-flash-lite': 0.05,
  'gemini-3-flash-preview': 0.25,
  'gemini-3.1-pro-preview': 1,
  'deepseek-chat': 0.135,
  'deepseek-reasoner': 0.275,
  'mistral-large-latest': 1,
  'mistral-small-latest': 0.1,
  'moonshot-v1-8k': 0.5,
  'glm-4': 3.5,
  'qwen-turbo': 0.025,
  'qwen-plus': 0.2,
  'qwen-max': 0.8,
  'command-r': 0.075,
  'command-r-plus': 1.25,
  'jina-embeddings-v3': 0.01,
  'jina-reranker-v2-base-multilingual': 0.01,
  ...Object.fromEntries(Object.entries(NATIVE_MODELS).map(([model, [ratio]]) => [model, ratio]))
}

export const DEFAULT_COMPLETION_RATIO: Readonly<Record<string, number>> = {
  'gpt-4o': 4, 'gpt-4o-2024-08-06': 4, 'gpt-4o-2024-11-20': 4, 'gpt-4o-mini': 4,
  'gpt-4o-audio-preview': 4, 'gpt-4o-mini-audio-preview': 4, 'gpt-4o-realtime-preview': 4, 'gpt-4o-mini-realtime-preview': 4,
  'gpt-4.1': 4, 'gpt-4.1-mini': 4, 'gpt-4.1-nano': 4,
  'gpt-4-turbo': 3, 'gpt-4': 2, 'gpt-3.5-turbo': 3, 'gpt-3.5-turbo-0125': 3,
  'o1': 4, 'o1-mini': 4, 'o3': 4, 'o3-mini': 4, 'o4-mini': 4,
  'gpt-5': 8, 'gpt-5-mini': 8, 'gpt-5-nano': 8,
  'claude-3-5-haiku-20241022': 5, 'claude-3-5-sonnet-20241022': 5, 'claude-3-7-sonnet-20250219': 5,
  'claude-sonnet-4-20250514': 5, 'claude-sonnet-4-5-20250929': 5, 'claude-opus-4-20250514': 5,
  'claude-opus-4-1-20250805': 5, 'claude-haiku-4-5-20251001': 5,
  'claude-opus-4-6': 5, 'claude-sonnet-4-6': 5, 'claude-opus-4-5-20251101': 5, 'claude-opus-4-5': 5,
  'claude-haiku-4-5': 5, 'claude-sonnet-4-5': 5, 'claude-opus-4-1': 5, 'claude-opus-4-0': 5, 'claude-sonnet-4-0': 5,
  'gemini-1.5-flash': 4, 'gemini-1.5-pro': 4, 'gemini-2.0-flash': 4, 'gemini-2.5-flash': 8.33, 'gemini-2.5-pro': 8,
  'gemini-2.5-flash-lite': 4, 'gemini-3-flash-preview': 6, 'gemini-3.1-pro-preview': 6,
  'deepseek-chat': 4, 'deepseek-reasoner': 4, 'mistral-large-latest': 3, 'mistral-small-latest': 3,
  'moonshot-v1-8k': 1, 'glm-4': 1, 'qwen-turbo': 4, 'qwen-plus': 3, 'qwen-max': 4,
  'command-r': 4, 'command-r-plus': 4,
  ...Object.fromEntries(Object.entries(NATIVE_MODELS).filter(([, [, completion]]) => completion > 0).map(([model, [, completion]]) => [model, completion]))
}

/**
 * Dollars per call for models billed per request rather than per token; for video models, per
 * second of video. Midjourney's zoom and inpaint buttons cost nothing themselves: the modal
 * submit that completes them is billed (mj_modal).
 */
export const DEFAULT_MODEL_PRICE: Readonly<Record<string, number>> = {
  'dall-e-3': 0.04,
  'dall-e-2': 0.02,
  'gpt-image-1': 0.04,
  'mj_imagine': 0.1,
  'mj_variation': 0.1,
  'mj_reroll': 0.1,
  'mj_blend': 0.1,
  'mj_upscale': 0.05,
  'mj_describe': 0.05,
  'mj_modal': 0.1,
  'mj_zoom': 0.1,
  'mj_custom_zoom': 0,
  'mj_inpaint': 0,
  'mj_shorten': 0.1,
  'mj_high_variation': 0.1,
  'mj_low_variation': 0.1,
  'mj_pan': 0.1,
  'mj_swap_face': 0.05,
  'mj_upload': 0.05,
  'mj_video': 0.2,
  'mj_edits': 0.1,
  'suno_music': 0.1,
  'suno_lyrics': 0.01,
  'sora-2': 0.1,
  'sora-2-pro': 0.3
}

/**
 * Price of cached prompt tokens relative to ordinary prompt tokens, per model (providers bill
 * cache hits at a discount). Models missing here bill cached tokens at 1x.
 */
export const DEFAULT_CACHE_RATIO: Readonly<Record<string, number>> = {
  'gpt-4o': 0.5, 'gpt-4o-2024-08-06': 0.5, 'gpt-4o-2024-11-20': 0.5, 'gpt-4o-mini': 0.5,
  'gpt-4.1': 0.25, 'gpt-4.1-mini': 0.25, 'gpt-4.1-nano': 0.25,
  'o1': 0.5, 'o1-mini': 0.5, 'o3': 0.25, 'o3-mini': 0.5, 'o4-mini': 0.25,
  'gpt-5': 0.1, 'gpt-5-mini': 0.1, 'gpt-5-nano': 0.1,
  'claude-3-5-haiku-20241022': 0.1, 'claude-3-5-sonnet-20241022': 0.1, 'claude-3-7-sonnet-20250219': 0.1,
  'claude-sonnet-4-20250514': 0.1, 'claude-sonnet-4-5-20250929': 0.1, 'claude-opus-4-20250514': 0.1,
  'claude-opus-4-1-20250805': 0.1, 'claude-haiku-4-5-20251001': 0.1,
  'claude-opus-4-6': 0.1, 'claude-sonnet-4-6': 0.1, 'claude-opus-4-5-20251101': 0.1, 'claude-opus-4-5': 0.1,
  'claude-haiku-4-5': 0.1, 'claude-sonnet-4-5': 0.1, 'claude-opus-4-1': 0.1, 'claude-opus-4-0': 0.1, 'claude-sonnet-4-0': 0.1,
  'gemini-2.5-flash': 0.25, 'gemini-2.5-pro': 0.25,
  'gemini-2.5-flash-lite': 0.1, 'gemini-3-flash-preview': 0.1, 'gemini-3.1-pro-preview': 0.1,
  'deepseek-chat': 0.1, 'deepseek-reasoner': 0.1,
  'gpt-4o-realtime-preview': 0.5, 'gpt-4o-mini-realtime-preview': 0.5, 'gpt-realtime': 0.1, 'gpt-realtime-mini': 0.1,
  'MiniMax-M2.7': 0.1, 'MiniMax-M2.5': 0.1, 'MiniMax-M2.1': 0.1, 'MiniMax-M2': 0.1,
  'gpt-5.6-sol': 0.1, 'gpt-5.6-terra': 0.1, 'gpt-5.6-luna': 0.1, 'gpt-5.5': 0.1, 'gpt-5.4': 0.1, 'gpt-5.4-mini': 0.1
}

/**
 * Price of prompt tokens written to the provider's prompt cache relative to ordinary prompt
 * tokens, per model (CreateCacheRatio, as new-api names it): Anthropic bills a 5-minute cache
 * write at 1.25x the input price. Models missing here bill cache writes at 1x.
 */
export const DEFAULT_CREATE_CACHE_RATIO: Readonly<Record<string, number>> = Object.fromEntries(
  Object.keys(DEFAULT_CACHE_RATIO).filter((model) => model.startsWith('claude-')).map((model) => [model, 1.25])
)

/**
 * Audio prompt tokens relative to the model's text prompt tokens (AudioRatio), and audio
 * completion tokens relative to audio prompt tokens (AudioCompletionRatio). A model without an
 * entry bills its audio tokens as text tokens.
 */
export const DEFAULT_AUDIO_RATIO: Readonly<Record<string, number>> = {
  'gpt-4o-audio-preview': 16, 'gpt-4o-mini-audio-preview': 66.67,
  'gpt-4o-realtime-preview': 8, 'gpt-4o-mini-realtime-preview': 16.67,
  'gpt-realtime': 8, 'gpt-realtime-mini': 16.67
}

export const DEFAULT_AUDIO_COMPLETION_RATIO: Readonly<Record<string, number>> = {
  'gpt-4o-audio-preview': 2, 'gpt-4o-mini-audio-preview': 2,
  'gpt-4o-realtime-preview': 2, 'gpt-4o-mini-realtime-preview': 2,
  'gpt-realtime': 2, 'gpt-realtime-mini': 2
}
