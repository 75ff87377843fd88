import type { ChannelConfig, RelayRequest } from '../core/adaptor.js'

/** Used when the channel has no base URL (Google AI Studio's Gemini API). */
export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com'

/** The API version this adaptor speaks. */
export const GEMINI_API_VERSION = 'v1beta'

/** One page of up to 1000 models: more than Google offers, so one request lists them all. */
export const GEMINI_MODELS_PATH = '/v1beta/models?pageSize=1000'

/** `${base}/v1beta/...`; a base URL pasted with its `/v1beta` is not doubled. */
export function geminiUrl (base: string, path: string): string {
  const version = `/${GEMINI_API_VERSION}`
  return base.endsWith(version) ? base + path.slice(version.length) : base + path
}

/** A model name as Google's paths want it: without a `models/` prefix, escaped. */
export function geminiModelName (model: string): string {
  return model.startsWith('models/') ? model.slice('models/'.length) : model
}

/**
 * The path of a generation request: `:generateContent`, or `:streamGenerateContent?alt=sse`
 * (server-sent events, one GenerateContentResponse per event) when streaming.
 */
export function geminiGeneratePath (model: string, stream: boolean): string {
  const name = encodeURIComponent(geminiModelName(model))
  return `/${GEMINI_API_VERSION}/models/${name}${stream ? ':streamGenerateContent?alt=sse' : ':generateContent'}`
}

/** `x-goog-api-key` (the key never goes in the URL), plus the JSON content type for a body. */
export function geminiHeaders (channel: ChannelConfig, req?: RelayRequest): Record<string, string> {
  const headers: Record<string, string> = { 'x-goog-api-key': channel.key.trim() }
  if (req !== undefined) headers['content-type'] = 'application/json'
  return headers
}
