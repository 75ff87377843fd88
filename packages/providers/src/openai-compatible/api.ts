import type { ChannelConfig, RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import type { Payload, UrlContext, UrlTarget } from './types.js'

/** Path of each OpenAI endpoint, relative to the base URL. */
const OPENAI_PATHS: Readonly<Record<UrlTarget, string>> = {
  chat: '/v1/chat/completions',
  completions: '/v1/completions',
  responses: '/v1/responses',
  embeddings: '/v1/embeddings',
  images_generations: '/v1/images/generations',
  images_edits: '/v1/images/edits',
  audio_speech: '/v1/audio/speech',
  audio_transcriptions: '/v1/audio/transcriptions',
  audio_translations: '/v1/audio/translations',
  moderations: '/v1/moderations',
  rerank: '/v1/rerank',
  models: '/v1/models'
}

export const JSON_CONTENT_TYPE = 'application/json'

/** The channel's base URL, else `defaultBaseUrl`, without trailing slashes. */
export function resolveBaseUrl (channel: ChannelConfig, defaultBaseUrl: string): string {
  const base = (channel.baseUrl.trim() || defaultBaseUrl).replace(/\/+$/, '')
  if (base === '') throw new ProviderError(PROVIDER_ERROR_CODES.noBaseUrl, `channel ${channel.id} has no base URL`)
  if (!/^https?:\/\//i.test(base)) {
    throw new ProviderError(PROVIDER_ERROR_CODES.badBaseUrl, `channel ${channel.id}: the base URL must start with http:// or https://`)
  }
  return base
}

/** `${base}/v1/...` for `target`. */
export function openAIUrl (base: string, target: UrlTarget): string {
  const path = OPENAI_PATHS[target]
  // Admins often paste the base with its `/v1` (as SDKs want it); do not double it.
  return base.endsWith('/v1') ? base + path.slice(3) : base + path
}

/** The default URL builder of OpenAI-compatible types. */
export function defaultUrlFor ({ base, target }: UrlContext): string {
  return openAIUrl(base, target)
}

/** `Authorization: Bearer <key>`, or nothing when the channel has no key (local upstreams). */
export function bearerHeaders (channel: ChannelConfig): Record<string, string> {
  const key = channel.key.trim()
  return key === '' ? {} : { Authorization: `Bearer ${key}` }
}

/**
 * The client's JSON body with `model` replaced and `patch` applied (unknown fields untouched),
 * or the raw body as is when the client sent one (multipart).
 */
export function requestPayload (req: RelayRequest, patch: (body: Record<string, unknown>) => void = () => {}): Payload {
  if (req.raw !== undefined) return { contentType: req.raw.contentType, body: req.raw.data }
  if (req.body === undefined) {
    throw new ProviderError(PROVIDER_ERROR_CODES.noBody, `a ${req.endpoint} request needs a body`)
  }
  const body: Record<string, unknown> = { ...req.body, model: req.model }
  patch(body)
  return { contentType: JSON_CONTENT_TYPE, body: JSON.stringify(body) }
}
