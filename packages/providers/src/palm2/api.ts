import type { ChannelConfig } from '../core/adaptor.js'
import { geminiModelName } from '../gemini/index.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'

/** Used when the channel has no base URL (Google's Generative Language API). */
export const PALM_BASE_URL = 'https://generativelanguage.googleapis.com'

/** The PaLM API version (generateMessage exists only there). */
const PALM_API_VERSION = 'v1beta2'

/** One page of up to 1000 models: more than Google offers. */
export const PALM_MODELS_PATH = `/${PALM_API_VERSION}/models?pageSize=1000`

/** `${base}/v1beta2/...`; a base URL pasted with its `/v1beta2` is not doubled. */
export function palmUrl (channel: ChannelConfig, path: string): string {
  const base = resolveBaseUrl(channel, PALM_BASE_URL)
  const version = `/${PALM_API_VERSION}`
  return base.endsWith(version) ? base + path.slice(version.length) : base + path
}

/** The generateMessage path of `model` (PaLM cannot stream: streamed requests use it too). */
export function palmMessagePath (model: string): string {
  return `/${PALM_API_VERSION}/models/${encodeURIComponent(geminiModelName(model))}:generateMessage`
}

/** `x-goog-api-key` (the key never goes in the URL), plus the JSON content type for a body. */
export function palmHeaders (channel: ChannelConfig, withBody: boolean): Record<string, string> {
  const headers: Record<string, string> = { 'x-goog-api-key': channel.key.trim() }
  if (withBody) headers['content-type'] = 'application/json'
  return headers
}
