import type { RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { contentText, isRecord, list, str, type JsonRecord } from '../core/json.js'

/** Models served by the multimodal-generation endpoint (vision, QVQ reasoning over images, Omni, audio). */
const MULTIMODAL_MODEL = /(^|[-_.])(vl|qvq|omni|audio)([-_.]|$)/i

/** OpenAI chat fields DashScope reads under `parameters`, by the same name. */
const PARAMETERS = [
  'temperature', 'top_p', 'top_k', 'seed', 'stop', 'presence_penalty', 'repetition_penalty', 'n', 'logprobs', 'top_logprobs',
  'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'enable_search', 'search_options', 'enable_thinking',
  'thinking_budget', 'vl_high_resolution_images', 'translation_options', 'enable_code_interpreter'
]

type Part = Record<string, unknown>

/** Whether a message part is something other than text (an image, audio or video). */
function mediaPart (part: unknown): boolean {
  return isRecord(part) && part.type !== undefined && part.type !== 'text'
}

/**
 * Whether `req` goes to the multimodal-generation endpoint: a vision, QVQ, Omni or audio model,
 * or any message carrying an image, audio or video part.
 */
export function isMultimodal (req: RelayRequest): boolean {
  if (MULTIMODAL_MODEL.test(req.model)) return true
  return list(req.body?.messages).some((message) => isRecord(message) && list(message.content).some(mediaPart))
}

/** An OpenAI content part as a DashScope multimodal part (`{text}`, `{image}`, `{audio}`, `{video}`); undefined when it has none. */
function multimodalPart (part: unknown): Part | undefined {
  if (typeof part === 'string') return { text: part }
  if (!isRecord(part)) return undefined
  if (part.type === 'text') return { text: str(part.text) ?? '' }
  if (part.type === 'image_url') {
    const image = isRecord(part.image_url) ? str(part.image_url.url) : str(part.image_url)
    return image === undefined ? undefined : { image }
  }
  if (part.type === 'input_audio' && isRecord(part.input_audio)) {
    const data = str(part.input_audio.data)
    if (data === undefined) return undefined
    // DashScope takes audio by URL or as a data URL.
    return { audio: /^(https?:|data:)/.test(data) ? data : `data:audio/${str(part.input_audio.format) ?? 'wav'};base64,${data}` }
  }
  if (part.type === 'video_url') {
    const video = isRecord(part.video_url) ? str(part.video_url.url) : str(part.video_url)
    return video === undefined ? undefined : { video }
  }
  return undefined
}

/** One OpenAI message as DashScope takes it: content a string (text models) or a list of parts (multimodal). */
function message (value: unknown, multimodal: boolean): Record<string, unknown> | undefined {
  if (!isRecord(value)) return undefined
  const role = value.role === 'developer' ? 'system' : str(value.role) ?? 'user'
  const out: Record<string, unknown> = { role }
  if (multimodal && role !== 'assistant' && role !== 'tool') {
    const parts = typeof value.content === 'string' ? [{ text: value.content }] : list(value.content).map(multimodalPart).filter((part) => part !== undefined)
    out.content = parts
  } else {
    out.content = contentText(value.content)
  }
  if (Array.isArray(value.tool_calls) && value.tool_calls.length > 0) out.tool_calls = value.tool_calls
  const callId = str(value.tool_call_id)
  if (callId !== undefined) out.tool_call_id = callId
  const name = str(value.name)
  if (name !== undefined) out.name = name
  return out
}

/**
 * A DashScope generation body for an OpenAI chat request: `{model, input: {messages},
 * parameters}` with `result_format: 'message'` (OpenAI-like choices), the sampling and tool
 * fields under `parameters` (`max_completion_tokens` as `max_tokens`), and `incremental_output`
 * when streaming (each event then carries only the new text, as OpenAI deltas do). The Qwen
 * extensions (`enable_thinking`, `thinking_budget`, `enable_search`, ...) pass through.
 */
export function dashscopeChatBody (req: RelayRequest): JsonRecord {
  const body = req.body
  if (body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'a chat request needs a body')
  const multimodal = isMultimodal(req)
  const messages = list(body.messages).map((m) => message(m, multimodal)).filter((m) => m !== undefined)
  const parameters: Record<string, unknown> = { result_format: 'message' }
  for (const key of PARAMETERS) if (body[key] !== undefined && body[key] !== null) parameters[key] = body[key]
  const maxTokens = body.max_tokens ?? body.max_completion_tokens
  if (maxTokens !== undefined && maxTokens !== null) parameters.max_tokens = maxTokens
  if (req.stream) parameters.incremental_output = true
  return { model: req.model, input: { messages }, parameters }
}

/**
 * A DashScope text-embedding body for an OpenAI embeddings request: the input (a string or a list
 * of strings) as `input.texts`, `dimensions` as `parameters.dimension`. Token-id inputs are refused.
 */
export function dashscopeEmbeddingsBody (req: RelayRequest): JsonRecord {
  const input = req.body?.input
  const texts = typeof input === 'string' ? [input] : list(input)
  if (texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
    throw new ProviderError(PROVIDER_ERROR_CODES.unsupported, 'Alibaba embeddings take text input (a string or a list of strings)')
  }
  const parameters: Record<string, unknown> = {}
  if (typeof req.body?.dimensions === 'number') parameters.dimension = req.body.dimensions
  return { model: req.model, input: { texts }, parameters }
}
