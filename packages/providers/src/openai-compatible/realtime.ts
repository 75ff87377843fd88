import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, UpstreamRequest, Usage } from '../core/adaptor.js'
import { azureHeaders } from '../azure/api.js'
import { azureRealtimeUrl } from '../azure/realtime.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { at, isRecord, num } from '../core/json.js'
import { OPENAI_BASE_URL, openAIHeaders } from '../openai/api.js'
import { resolveBaseUrl } from './api.js'

/** Channel types whose upstream has OpenAI's realtime websocket: OpenAI and Azure OpenAI. */
const REALTIME_CHANNEL_TYPES: readonly number[] = [CHANNEL_TYPE.openai, CHANNEL_TYPE.azure]

/** Whether channels of `type` can serve `GET /v1/realtime`. */
export function realtimeSupported (type: number): boolean {
  return REALTIME_CHANNEL_TYPES.includes(type)
}

interface RealtimeOptions {
  /**
   * The client speaks the beta protocol (`OpenAI-Beta: realtime=v1`); OpenAI then gets the same
   * header. Without it OpenAI speaks the GA protocol. Azure's preview endpoint needs no header.
   */
  beta?: boolean
}

/**
 * The websocket handshake of a realtime session on `channel` for `model` (after the channel's
 * model mapping): a GET to a ws(s):// URL with the channel's credentials. OpenAI:
 * `{base}/v1/realtime?model=...` with `Authorization: Bearer`; Azure:
 * `{base}/openai/realtime?api-version=...&deployment=...` with `api-key`.
 */
export function realtimeRequest (channel: ChannelConfig, model: string, opts: RealtimeOptions = {}): UpstreamRequest {
  if (channel.type === CHANNEL_TYPE.azure) {
    return { method: 'GET', url: azureRealtimeUrl(resolveBaseUrl(channel, ''), channel, model), headers: azureHeaders(channel) }
  }
  if (channel.type !== CHANNEL_TYPE.openai) {
    throw new ProviderError(PROVIDER_ERROR_CODES.unsupported, `channel type ${channel.type} has no realtime API`)
  }
  const base = resolveBaseUrl(channel, OPENAI_BASE_URL).replace(/^http/i, 'ws')
  // Admins often paste the base with its `/v1` (as SDKs want it); do not double it.
  const url = `${base}${base.endsWith('/v1') ? '' : '/v1'}/realtime?model=${encodeURIComponent(model)}`
  const headers = openAIHeaders(channel)
  if (opts.beta === true) headers['OpenAI-Beta'] = 'realtime=v1'
  return { method: 'GET', url, headers }
}

const count = (value: unknown): number | undefined => {
  const n = num(value)
  return n === undefined ? undefined : Math.max(0, Math.trunc(n))
}

/**
 * The usage of a realtime `response.done` event (`response.usage`), or undefined when it has no
 * token counts. Cached tokens (text and audio) are a part of the prompt; the audio prompt tokens
 * are the uncached ones (`input_token_details.audio_tokens` less
 * `cached_tokens_details.audio_tokens`), so that cached audio is billed at the cache ratio and
 * only fresh audio at the audio ratio. Audio output tokens are a part of the completion.
 */
export function realtimeUsage (value: unknown): Usage | undefined {
  if (!isRecord(value)) return undefined
  const input = count(value.input_tokens)
  const output = count(value.output_tokens)
  const total = count(value.total_tokens)
  if (input === undefined && output === undefined) return undefined
  const prompt = input ?? (total !== undefined && output !== undefined ? Math.max(0, total - output) : 0)
  const completion = output ?? (total !== undefined ? Math.max(0, total - prompt) : 0)
  const usage: Usage = { promptTokens: prompt, completionTokens: completion }
  const details = value.input_token_details
  const cached = Math.min(prompt, count(at(details, 'cached_tokens')) ?? 0)
  if (cached > 0) usage.cachedTokens = cached
  const audioIn = count(at(details, 'audio_tokens')) ?? 0
  const cachedAudio = count(at(details, 'cached_tokens_details', 'audio_tokens')) ?? 0
  const freshAudio = Math.min(prompt - cached, Math.max(0, audioIn - cachedAudio))
  if (freshAudio > 0) usage.audioPromptTokens = freshAudio
  const audioOut = Math.min(completion, count(at(value, 'output_token_details', 'audio_tokens')) ?? 0)
  if (audioOut > 0) usage.audioCompletionTokens = audioOut
  return usage
}
