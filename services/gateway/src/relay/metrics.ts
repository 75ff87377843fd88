import { channelsAutoDisabled, counter, gauge, histogram, statusClass } from '@modelgate/service'
import { isTimeout } from './upstream.js'

/**
 * The gateway's domain metrics (served on METRICS_PORT with the process's others). Labels come
 * from small fixed sets (endpoint, status class, yes/no, refusal reason, error kind) plus the
 * channel id, bounded by the number of channels; never a model, user, token or URL.
 */

const relayDuration = histogram('modelgate_relay_duration_seconds',
  'Relay requests from routing to the end of the answer (refusals included), by endpoint, status class and streaming',
  ['endpoint', 'status_class', 'stream'])
const relayFirstByte = histogram('modelgate_relay_first_byte_seconds',
  'Admitted relay requests: time from arrival to the first byte of the answer sent to the client',
  ['endpoint', 'stream'])

/** One relay request is over: `status` is the status the client gets (or got). */
export function observeRelay (endpoint: string, status: number, stream: boolean, seconds: number): void {
  relayDuration.observe({ endpoint, status_class: statusClass(status), stream: stream ? 'yes' : 'no' }, seconds)
}

/** An admitted request sent its first byte `seconds` after it arrived. */
export function observeFirstByte (endpoint: string, stream: boolean, seconds: number): void {
  relayFirstByte.observe({ endpoint, stream: stream ? 'yes' : 'no' }, seconds)
}

const upstreamDuration = histogram('modelgate_upstream_duration_seconds',
  'Upstream calls: time from sending the request to the answer\'s status and headers (or the failure), by channel id',
  ['channel'])
const upstreamErrors = counter('modelgate_upstream_errors_total',
  'Upstream calls that failed, by channel id and kind: refused_4xx, refused_429, refused_5xx, refused_other (the upstream refused with that status class, or a 2xx reporting a failure), unreachable, timeout, read_failed (the answer broke off)',
  ['channel', 'kind'])

/** An upstream call's headers (or its failure) came `seconds` after it was sent. */
export function observeUpstream (channel: number, seconds: number): void {
  upstreamDuration.observe({ channel }, seconds)
}

export type UpstreamErrorKind = 'refused_4xx' | 'refused_429' | 'refused_5xx' | 'refused_other' | 'unreachable' | 'timeout' | 'read_failed'

/** The kind of a refusal with `status` (refused_other: a 2xx whose body reports a failure, or credentials refused while authorizing). */
export function refusalKind (status: number): UpstreamErrorKind {
  return status === 429 ? 'refused_429' : status >= 400 && status < 500 ? 'refused_4xx' : status >= 500 && status < 600 ? 'refused_5xx' : 'refused_other'
}

/** `timeout` or `unreachable`: why a call got no answer. */
export function failureKind (err: unknown): UpstreamErrorKind {
  return isTimeout(err) ? 'timeout' : 'unreachable'
}

export function countUpstreamError (channel: number, kind: UpstreamErrorKind): void {
  upstreamErrors.inc({ channel, kind })
}

/** Why a reservation was refused: the quota store's reasons, or Redis unreachable (fail closed). */
export type RefusalReason = 'user_quota' | 'token_quota' | 'entitlement_quota' | 'user_concurrency' | 'token_concurrency' | 'token_rpm' | 'token_tpm' | 'duplicate' | 'redis_down'

export const reservationsAdmitted = counter('modelgate_reservations_admitted_total', 'Relay requests admitted: quota reserved in Redis (each owes one usage event)')
const reservationsRefused = counter('modelgate_reservations_refused_total',
  'Relay requests refused at reservation, by reason: user_quota, token_quota, user_concurrency, token_concurrency, token_rpm, token_tpm, duplicate (a request id reserved twice), redis_down',
  ['reason'])

// Every series of a fixed label set exists from the start at 0: Prometheus' increase() misses a
// series' first increment when the series appears with it.
for (const reason of ['user_quota', 'token_quota', 'user_concurrency', 'token_concurrency', 'token_rpm', 'token_tpm', 'duplicate', 'redis_down'] as const) reservationsRefused.inc({ reason }, 0)

export function countRefusal (reason: RefusalReason): void {
  reservationsRefused.inc({ reason })
}

export const usageEventsPublished = counter('modelgate_usage_events_published_total', 'Usage events put on the usage queue')
export const usageEventsLost = counter('modelgate_usage_events_unqueued_total',
  'Usage events given up after every retry (the queue never answered): logged whole as "usage event could not be queued", to be settled by hand')

/** What a usage publisher holds in memory: events batching or being sent, and events held while the queue does not answer. */
export interface UsageBuffer { pendingEvents: number, held: number }
const usageBuffers = new Set<UsageBuffer>()
gauge('modelgate_usage_events_buffered', 'Usage events in gateway memory not yet on the queue: pending (batching or being sent) and held (the queue did not answer; retried every 2 s)',
  ['state'], function () {
    let pending = 0; let held = 0
    for (const b of usageBuffers) { pending += b.pendingEvents; held += b.held }
    this.set({ state: 'pending' }, pending)
    this.set({ state: 'held' }, held)
  })

/** Reports `buffer` in modelgate_usage_events_buffered until the returned function is called. */
export function trackUsageBuffer (buffer: UsageBuffer): () => void {
  usageBuffers.add(buffer)
  return () => { usageBuffers.delete(buffer) }
}

channelsAutoDisabled.inc({ source: 'relay' }, 0)

export { channelsAutoDisabled }
