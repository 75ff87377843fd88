import type { UsageEvent } from '@modelgate/contracts'
import { type Price, priceDetails } from '@modelgate/pricing'
import type { Usage } from '@modelgate/providers'
import type { UsageError } from './attempts.js'
import { type Caller, payer } from './auth.js'
import type { Entitlement } from './callers.js'

/**
 * What the usage event of an admitted request reports about it: who asked for what, set at
 * admission, then where it went, filled in as the channels are tried. The HTTP pipeline's
 * per-request outcome is one; a task submission keeps one, a realtime session makes one per
 * response.
 */
export interface UsageRecord {
  /** The request id (a realtime response's: its session's id and number). */
  requestId: string
  /** When the request arrived, unix ms. */
  startedAt: number
  caller: Caller
  /** The model the client asked for. */
  model: string
  group: string
  ip: string
  stream: boolean
  price: Price
  /** Quota units reserved at admission. */
  reserved: number
  /** The channel the event names: the one that answered, else the last one tried; none when no channel was reached. */
  channel?: { readonly id: number } | undefined
  /** The model sent upstream (the channel's mapping applied). */
  upstreamModel: string
  /** The channels attempted, in order, each once. */
  tried: number[]
  /** When the answer's first byte went to the client, unix ms; 0 when none did. */
  firstByteAt: number
  error?: UsageError | undefined
  /** The entitlement item paying (admission's choice); the wallet when absent. */
  paidBy?: Entitlement | undefined
}

/**
 * The one usage event of an admitted request, from its record and how it ended: `usage` is what
 * is billed (undefined when nothing is), `quota` its cost, `source` where the usage came from.
 */
export function usageEvent (r: UsageRecord, outcome: UsageEvent['outcome'], quota: number, usage: Usage | undefined, source: UsageEvent['usage_source'], endedAt = Date.now()): UsageEvent {
  const channelId = r.channel?.id ?? 0
  const event: UsageEvent = {
    request_id: r.requestId,
    created_at: Math.floor(r.startedAt / 1000),
    ...payer(r.caller),
    channel_id: channelId,
    model_name: r.model,
    upstream_model: r.upstreamModel,
    group: r.group,
    is_stream: r.stream,
    ip: r.ip,
    use_time_ms: Math.max(0, endedAt - r.startedAt),
    first_response_ms: r.firstByteAt === 0 ? 0 : r.firstByteAt - r.startedAt,
    prompt_tokens: usage === undefined ? 0 : usage.promptTokens,
    completion_tokens: usage === undefined ? 0 : usage.completionTokens,
    cached_tokens: usage === undefined ? 0 : usage.cachedTokens ?? 0,
    reserved: r.reserved,
    quota,
    outcome,
    usage_source: source,
    price: priceDetails(r.price),
    // The event's channel is channel_id, answered or not: the log's use_channel adds it once.
    retried_channels: r.tried.filter((id) => id !== channelId)
  }
  if (usage !== undefined) {
    if ((usage.cacheWriteTokens ?? 0) > 0) event.cache_write_tokens = usage.cacheWriteTokens
    const audioIn = usage.audioPromptTokens ?? 0
    const audioOut = usage.audioCompletionTokens ?? 0
    if (audioIn + audioOut > 0) {
      event.audio_prompt_tokens = audioIn
      event.audio_completion_tokens = audioOut
    }
  }
  if (r.error !== undefined) event.error = r.error
  if (r.paidBy !== undefined) {
    event.paid_by = { item_id: r.paidBy.itemId, subscription_id: r.paidBy.subscriptionId, plan_title: r.paidBy.planTitle, quota_type: r.paidBy.quotaType }
  }
  return event
}

/** What the event of a refused request reports: who asked for what, and what they were told. */
export interface RefusalRecord {
  requestId: string
  /** When the request arrived, unix ms. */
  startedAt: number
  caller: Caller
  /** The model asked for; '' when the request named none. */
  model: string
  ip: string
  stream: boolean
  /** The refusal's status and its message in English (englishMessage of relay/errors.ts). */
  status: number
  message: string
}

/**
 * The event of a relay request refused after its caller was known (ErrorLogEnabled): outcome
 * `refused`, nothing reserved, nothing owed; settlement writes its error log row only.
 */
export function refusalEvent (r: RefusalRecord, endedAt = Date.now()): UsageEvent {
  return {
    request_id: r.requestId,
    created_at: Math.floor(r.startedAt / 1000),
    ...payer(r.caller),
    channel_id: 0,
    model_name: r.model,
    upstream_model: r.model,
    group: r.caller.group,
    is_stream: r.stream,
    ip: r.ip,
    use_time_ms: Math.max(0, endedAt - r.startedAt),
    first_response_ms: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    reserved: 0,
    quota: 0,
    outcome: 'refused',
    usage_source: 'none',
    price: {},
    retried_channels: [],
    error: { status: r.status, message: r.message }
  }
}
