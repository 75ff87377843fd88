import type { ChannelConfig } from '../core/adaptor.js'

/** Used when the channel has no base URL. */
export const COHERE_BASE_URL = 'https://api.cohere.com'

/** The v2 endpoints this adaptor speaks, by what the client called. */
export const COHERE_PATHS = {
  chat: '/v2/chat',
  embeddings: '/v2/embed',
  rerank: '/v2/rerank'
} as const

/** Every model of the account in one page (the list has a few dozen). */
export const COHERE_MODELS_PATH = '/v1/models?page_size=1000'

/** `${base}${path}`; a base URL pasted with its `/v1` or `/v2` is not doubled. */
export function cohereUrl (base: string, path: string): string {
  return base.replace(/\/v[12]$/, '') + path
}

/** `Authorization: Bearer <key>`, plus the JSON content type for a body. */
export function cohereHeaders (channel: ChannelConfig, body = false): Record<string, string> {
  const headers: Record<string, string> = { Authorization: `Bearer ${channel.key.trim()}` }
  if (body) headers['Content-Type'] = 'application/json'
  return headers
}
