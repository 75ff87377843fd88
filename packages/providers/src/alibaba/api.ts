import type { ChannelConfig } from '../core/adaptor.js'

/** Used when the channel has no base URL (Model Studio, China (Beijing)). */
export const DASHSCOPE_BASE_URL = 'https://dashscope.aliyuncs.com'

/** Text generation (Qwen text models): `{model, input: {messages}, parameters}`. */
export const DASHSCOPE_TEXT_PATH = '/api/v1/services/aigc/text-generation/generation'

/** Multimodal generation (Qwen-VL, QVQ, Omni): the same body with content as a list of `{text}`, `{image}`, ... parts. */
export const DASHSCOPE_MULTIMODAL_PATH = '/api/v1/services/aigc/multimodal-generation/generation'

/** Synchronous text embeddings: `{model, input: {texts}, parameters: {dimension}}`. */
export const DASHSCOPE_EMBEDDINGS_PATH = '/api/v1/services/embeddings/text-embedding/text-embedding'

/** DashScope has no native model list; its OpenAI-compatible mode lists the models the key may use. */
export const DASHSCOPE_MODELS_PATH = '/compatible-mode/v1/models'

/** `${base}${path}`; a base URL pasted with `/api/v1` or `/compatible-mode/v1` is not doubled. */
export function dashscopeUrl (base: string, path: string): string {
  return base.replace(/\/(api|compatible-mode)\/v1$/, '') + path
}

/**
 * `Authorization: Bearer <API key>`, the JSON content type for a body, and `X-DashScope-SSE:
 * enable` for a stream (DashScope answers with server-sent events only when asked by this header).
 */
export function dashscopeHeaders (channel: ChannelConfig, body: boolean, stream = false): Record<string, string> {
  const headers: Record<string, string> = { Authorization: `Bearer ${channel.key.trim()}` }
  if (body) headers['Content-Type'] = 'application/json'
  if (stream) {
    headers['X-DashScope-SSE'] = 'enable'
    headers.Accept = 'text/event-stream'
  }
  return headers
}
