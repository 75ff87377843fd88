/**
 * Default billing ratios. A model ratio of 1 means $2 per million prompt tokens (500 000 quota
 * units per dollar); the completion ratio multiplies the price of completion tokens; a model
 * price (dollars per call) replaces token billing for that model. Values follow the providers'
 * public list prices. Models missing here are billed per the unknown-model policy of the relay,
 * never with a surprising default.
 */
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
  'jina-reranker-v2-base-multilingual': 0.01
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
  'command-r': 4, 'command-r-plus': 4
}

/** Dollars per call for models billed per request rather than per token. */
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
  'suno_music': 0.1,
  'suno_lyrics': 0.01
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
  'deepseek-chat': 0.1, 'deepseek-reasoner': 0.1
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
  'gpt-4o-realtime-preview': 8, 'gpt-4o-mini-realtime-preview': 16.67
}

export const DEFAULT_AUDIO_COMPLETION_RATIO: Readonly<Record<string, number>> = {
  'gpt-4o-audio-preview': 2, 'gpt-4o-mini-audio-preview': 2,
  'gpt-4o-realtime-preview': 2, 'gpt-4o-mini-realtime-preview': 2
}
