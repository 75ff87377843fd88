import { CHANNEL_STATUS, type UsageEvent } from '@modelgate/contracts'
import { recordChannelKeyError, setChannelKeyStatus, setChannelStatusAutomatically } from '@modelgate/db'
import { type ClassifiedFailure, cleanUpstreamMessage } from '@modelgate/providers'
import { englishMessage, RelayError, RM } from './errors.js'
import { channelsAutoDisabled } from './metrics.js'
import type { RelayDeps } from './deps.js'
import { pickKey, type RelayChannel, type RelayKey } from './state.js'

/** Why an attempt failed: what the client is told when no attempt succeeds. */
export interface AttemptFailure {
  status: number
  /** The gateway's own words (said to the client), or for a refusal the upstream's, cleaned (admins only). */
  message: string
  type: string
  code: string | null
  /** Set for a refusal by the upstream: `message` and this code are its own, never said to the client. */
  refusal?: { code?: string }
}

/** The `error` of a usage event: what the client was told, and what admins see of the upstream. */
export type UsageError = NonNullable<UsageEvent['error']>

/** What admins see of a failed attempt (the log's admin_info.error): its status, code and message, cleaned. */
export function upstreamReport (status: number, message: string, code?: string | null): NonNullable<UsageError['upstream']> {
  return { status, ...(typeof code === 'string' ? { code: cleanUpstreamMessage(code) } : {}), message: cleanUpstreamMessage(message) }
}

/** What a request's attempts are for. */
export interface AttemptPlan {
  group: string
  model: string
  /** The channel the caller chose: the only one tried, once (more with its other keys). */
  pinned?: RelayChannel | undefined
  /** The prompt's estimated tokens: channels with a lower max_input_tokens are passed over. */
  promptTokens: number
  /** Channel types that can serve the request at all; others are passed over without an attempt. */
  accepts?: ((type: number) => boolean) | undefined
}

const NO_KEY: Readonly<AttemptFailure> = { status: 503, message: 'the channel has no enabled key left', type: 'service_unavailable', code: 'no_available_key' }
const NO_CHANNEL: Readonly<AttemptFailure> = { status: 503, message: 'no channel left to try', type: 'service_unavailable', code: 'no_available_channel' }
/** The upstream ran out of time (see upstream.ts CallTimeouts) before anything reached the client: a gateway timeout, 504. */
export const TIMED_OUT: Readonly<AttemptFailure> = { status: 504, message: 'upstream timed out', type: 'upstream_error', code: 'upstream_timeout' }

/**
 * The failover of one request over the channels of its group and model: the highest priority
 * tier first, 1 + RetryTimes attempts (one for a pinned channel), each on a channel not yet
 * tried, with a key that has not failed this request. The caller makes the call of each attempt
 * and reports how it failed; what is learned (the last failure, whether every refusal was a 429,
 * dead keys and channels) decides the next attempt and the final error.
 */
export class ChannelAttempts {
  /** Ids of the channels attempted, in order (a channel retried with another key counts once). */
  readonly tried: number[]
  readonly #deps: RelayDeps
  readonly #plan: AttemptPlan
  /** Channels attempted or passed over: never picked again. */
  readonly #seen = new Set<number>()
  /** Keys that failed this request, by channel: a retry of the channel takes another one. */
  #failedKeys: Map<number, Set<string>> | undefined
  #left: number
  #channel: RelayChannel | undefined
  #key: RelayKey | undefined
  /** The channel to try again with another key, without using an attempt. */
  #again: RelayChannel | undefined
  #last: AttemptFailure | undefined
  /**
   * Whether every attempt so far was refused with 429 (the group's load is saturated): any other
   * failure (a timeout, a lost answer, an unreachable upstream) makes the final error that one.
   */
  #only429 = true
  /** The largest max_input_tokens of the channels passed over for a prompt too long for them. */
  #tooLongFor = 0

  constructor (deps: RelayDeps, plan: AttemptPlan, tried: number[] = []) {
    this.#deps = deps
    this.#plan = plan
    this.tried = tried
    this.#left = plan.pinned !== undefined ? 1 : 1 + Math.max(0, Math.trunc(deps.state.options.num('RetryTimes')))
  }

  /** The channel of the current attempt; once they are over, the last one attempted. */
  get channel (): RelayChannel | undefined {
    return this.#channel
  }

  /** The next attempt's channel (the same one after a dead key of several); undefined when none is left. */
  next (): RelayChannel | undefined {
    const again = this.#again
    if (again !== undefined) {
      this.#again = undefined
      return again
    }
    if (this.#left === 0) return undefined
    this.#left--
    const { state } = this.#deps
    const { group, model, pinned } = this.#plan
    let channel = pinned
    if (channel === undefined) {
      channel = state.pick(group, model, this.#seen)
      while (channel !== undefined && this.#passedOver(channel)) {
        this.#seen.add(channel.id)
        channel = state.pick(group, model, this.#seen)
      }
    }
    if (channel === undefined) {
      this.#left = 0
      return undefined
    }
    this.#seen.add(channel.id)
    this.tried.push(channel.id)
    this.#channel = channel
    return channel
  }

  #passedOver (channel: RelayChannel): boolean {
    const { accepts, promptTokens } = this.#plan
    if (accepts !== undefined && !accepts(channel.type)) return true
    if (channel.maxInputTokens > 0 && promptTokens > channel.maxInputTokens) {
      this.#tooLongFor = Math.max(this.#tooLongFor, channel.maxInputTokens)
      return true
    }
    return false
  }

  /** A key of the current channel that has not failed this request; without one, the attempt has failed. */
  takeKey (): RelayKey | undefined {
    const channel = this.#channel!
    const key = this.#key = pickKey(channel, this.#failedKeys?.get(channel.id))
    if (key === undefined) this.failed(NO_KEY)
    return key
  }

  /** The current attempt failed otherwise than by a refusal (the channel unusable, the upstream unreachable). */
  failed (failure: Readonly<AttemptFailure>): void {
    this.#last = failure
    this.#only429 = false
  }

  /** The current attempt's answer was lost after the upstream took the call (an empty stream, a read that failed). */
  lost (failure: Readonly<AttemptFailure>): void {
    this.#last = failure
    this.#only429 = false
  }

  /**
   * The upstream (or the authorization of the call) refused the current attempt with `status`,
   * classified as `failure`. A dead key of several is set aside and the channel tried `'again'`
   * with another one (no attempt used) while it has one; a dead channel is auto-disabled; a
   * `'client'` failure is the client's to hear; otherwise the `'next'` attempt goes on.
   */
  async refused (status: number, failure: ClassifiedFailure): Promise<'again' | 'next' | 'client'> {
    const channel = this.#channel!
    if (status !== 429) this.#only429 = false
    this.#last = { status, message: failure.message, type: 'upstream_error', code: 'upstream_error', refusal: failure.code === undefined ? {} : { code: failure.code } }
    if (failure.action === 'disable') {
      if (channel.keys.length > 1) {
        const key = this.#key!
        const failedKeys = this.#failedKeys ??= new Map()
        let failed = failedKeys.get(channel.id)
        if (failed === undefined) failedKeys.set(channel.id, failed = new Set())
        failed.add(key.fingerprint)
        await disableKey(this.#deps, channel, key, `${status}: ${failure.message}`)
        if (channel.status === CHANNEL_STATUS.enabled && pickKey(channel, failed) !== undefined) {
          this.#again = channel
          return 'again'
        }
        return 'next'
      }
      await autoDisable(this.#deps, channel, `${status}: ${failure.message}`)
    }
    return failure.action === 'client' ? 'client' : 'next'
  }

  /**
   * The error once no attempt succeeded: 400 when the prompt is longer than every channel takes,
   * 429 when every attempt was refused with 429, else the last failure (a 5xx such as a timeout's 504, or 502,
   * through the last channel's status code mapping). The client hears the gateway's own reason (a
   * timeout, an unreachable upstream) but never an upstream's words about its own failure (they
   * are for admins, found by the request id). `report.error` gets the status, what the client was
   * told (in English, with `requestId`) and the last failure for admins.
   */
  finalError (report?: { error?: UsageError }, requestId = ''): RelayError {
    const { group, model, promptTokens } = this.#plan
    const channel = this.#channel
    if (channel === undefined && this.#tooLongFor > 0) {
      if (report !== undefined) report.error = { status: 400, message: 'prompt longer than every channel accepts' }
      return new RelayError(400, 'invalid_request_error', 'context_length_exceeded', RM.promptTooLong,
        { tokens: String(promptTokens), model, max: String(this.#tooLongFor) })
    }
    const failure = this.#last ?? NO_CHANNEL
    const err = this.#finalErrorOf(failure, channel, group)
    if (report !== undefined) {
      report.error = { status: failure.status, message: englishMessage(err, requestId), ...(this.#last === undefined ? {} : { upstream: upstreamReportOf(this.#last) }) }
    }
    return err
  }

  #finalErrorOf (failure: Readonly<AttemptFailure>, channel: RelayChannel | undefined, group: string): RelayError {
    if (this.#last !== undefined && this.#only429) return new RelayError(429, 'rate_limit_exceeded', 'upstream_saturated', RM.loadSaturated, { group })
    const status = failure.status === 429 ? 429 : failure.status >= 500 ? failure.status : 502
    const message = failure.refusal === undefined ? RM.upstreamFailedBecause : failure.status === 429 ? RM.upstreamRateLimited : RM.upstreamFailed
    return new RelayError(channel === undefined ? status : mappedStatus(channel, status), failure.type, failure.code, message, failure.refusal === undefined ? { detail: failure.message } : {})
  }
}

/** What admins see of a failed attempt: a refusal's own code, else the gateway's. */
function upstreamReportOf (failure: Readonly<AttemptFailure>): NonNullable<UsageError['upstream']> {
  return upstreamReport(failure.status, failure.message, failure.refusal !== undefined ? failure.refusal.code : failure.code)
}

/** `status` through the channel's status code mapping. */
export function mappedStatus (channel: RelayChannel, status: number): number {
  const to = Number(channel.statusCodeMapping[String(status)])
  return Number.isInteger(to) && to >= 100 && to <= 599 ? to : status
}

/**
 * Sets one key of a multi-key channel aside after a failure that condemns the key (autoDisabled,
 * with the reason), when the channel's auto_ban and the option allow; otherwise only its last
 * error is recorded. The channel is auto-disabled when no enabled key is left.
 */
async function disableKey (deps: RelayDeps, channel: RelayChannel, key: RelayKey, reason: string): Promise<void> {
  if (!channel.autoBan || !deps.state.options.bool('AutomaticDisableChannelEnabled')) {
    await recordChannelKeyError(deps.db, channel.id, key.fingerprint, reason).catch(() => {})
    return
  }
  if (!await setChannelKeyStatus(deps.db, { id: channel.id, fingerprint: key.fingerprint, from: [CHANNEL_STATUS.enabled], to: CHANNEL_STATUS.autoDisabled, reason, lastError: reason })) return
  key.enabled = false
  if (!channel.keys.some((k) => k.enabled)) {
    await autoDisable(deps, channel, `all keys disabled; last: ${reason}`)
    return
  }
  await deps.state.loadRouting()
  await deps.publishChannelChange(channel.id)
}

/** Marks a channel auto-disabled (CHANNEL_STATUS.autoDisabled) with the reason, when its auto_ban and the option allow. */
async function autoDisable (deps: RelayDeps, channel: RelayChannel, reason: string): Promise<void> {
  if (!channel.autoBan || !deps.state.options.bool('AutomaticDisableChannelEnabled')) return
  if (!await setChannelStatusAutomatically(deps.db, { id: channel.id, from: CHANNEL_STATUS.enabled, to: CHANNEL_STATUS.autoDisabled, reason })) return
  channelsAutoDisabled.inc({ source: 'relay' })
  channel.status = CHANNEL_STATUS.autoDisabled
  await deps.state.loadRouting()
  await deps.publishChannelChange(channel.id)
}
