import { CHANNEL_STATUS } from '@modelgate/contracts'
import { type Price, priceOf } from '@modelgate/pricing'
import type { AdmissionLimits, EntitlementCharge, Lease, PayOrder, ReserveOutcome } from '@modelgate/quota'
import { type Span, SpanStatusCode, startSpan } from '@modelgate/service'
import type { FastifyRequest } from 'fastify'
import type { Caller } from './auth.js'
import type { Entitlement } from './callers.js'
import type { RelayDeps } from './deps.js'
import { RelayError, RM } from './errors.js'
import { countRefusal, reservationsAdmitted } from './metrics.js'
import type { RelayChannel, RelayState } from './state.js'

/*
 * Admission, shared by the HTTP pipeline, realtime sessions and task submissions: after the
 * caller's key and model checks (auth.ts), the channel the caller pinned or the group's routes,
 * the price, the user's model request limit, then the reservation with its admission limits.
 * Each step refuses with the RelayError the client hears, in this order.
 */

/** How long an unsettled reservation may live before reconciliation takes over. */
export const RESERVATION_TTL_S = 6 * 3600

/** No admission limit: a reservation that holds quota only (a realtime session's later responses). */
export const NO_LIMITS: Readonly<AdmissionLimits> = { userConcurrency: 0, tokenConcurrency: 0, tokenRpm: 0, tokenTpm: 0, tokens: 0 }

/**
 * The channel an administrator pinned with `sk-KEY-CHANNELID`, when it exists (and, with
 * `accepts`, is of a type that speaks the request's protocol: a pinned channel is called without
 * the failover's type filter) and is enabled; undefined when the caller pinned none.
 */
export function pinnedChannel (state: RelayState, caller: Caller, accepts?: (type: number) => boolean): RelayChannel | undefined {
  if (caller.pinnedChannel === undefined) return undefined
  const pinned = state.channels.get(caller.pinnedChannel)
  if (pinned === undefined || (accepts !== undefined && !accepts(pinned.type))) throw new RelayError(400, 'invalid_request_error', 'invalid_channel', RM.invalidChannelId)
  if (pinned.status !== CHANNEL_STATUS.enabled) throw new RelayError(403, 'invalid_request_error', 'channel_disabled', RM.channelDisabled)
  return pinned
}

/** The model's price in the group; refused when it has none (or, with `kind`, none of that kind). */
export function modelPrice (state: RelayState, model: string, group: string, kind?: Price['kind']): Price {
  const price = priceOf(state.pricing, model, group)
  if (price === undefined || (kind !== undefined && price.kind !== kind)) throw new RelayError(403, 'invalid_request_error', 'model_not_priced', RM.notPriced, { model })
  return price
}

/** The user's model request window: answered requests are counted under `successKey`. */
export interface UserRateLimit { successKey: string, windowS: number }

/**
 * Per-user model request limits (ModelRequestRateLimit* options): at most Count requests of any
 * outcome (0 = no limit) and SuccessCount answered requests per window, counted in Redis so the
 * limit holds across gateways.
 */
export async function checkUserRateLimit (deps: RelayDeps, userId: number): Promise<UserRateLimit | undefined> {
  const o = deps.state.options
  if (!o.bool('ModelRequestRateLimitEnabled')) return undefined
  const minutes = Math.max(1, Math.trunc(o.num('ModelRequestRateLimitDurationMinutes')))
  const windowS = minutes * 60
  const window = Math.floor(Date.now() / 1000 / windowS)
  const totalKey = `ratelimit:model:${userId}:${window}:all`
  const successKey = `ratelimit:model:${userId}:${window}:ok`
  const maxAll = Math.trunc(o.num('ModelRequestRateLimitCount'))
  const maxOk = Math.trunc(o.num('ModelRequestRateLimitSuccessCount'))
  const [all, okCount] = await Promise.all([
    deps.quota.redis.incr(totalKey).then(async (n) => { if (n === 1) await deps.quota.redis.expire(totalKey, windowS); return n }),
    deps.quota.redis.get(successKey).then((v) => Number(v ?? 0))
  ]).catch(() => { throw new RelayError(503, 'service_unavailable', 'quota_store_unavailable', RM.redisDown) })
  if ((maxAll > 0 && all > maxAll) || okCount >= maxOk) {
    const err = new RelayError(429, 'rate_limit_exceeded', 'rate_limit_exceeded', RM.userRateLimited, { count: String(maxAll > 0 && all > maxAll ? maxAll : maxOk), minutes: String(minutes) })
    // The window ends at the next multiple of its length.
    err.headers = { 'retry-after': String(Math.max(1, Math.ceil((window + 1) * windowS - Date.now() / 1000))) }
    throw err
  }
  return { successKey, windowS }
}

/** Counts an answered request in the user's window; never rejects. */
export function countSuccess (deps: RelayDeps, limit: UserRateLimit): Promise<unknown> {
  return deps.quota.redis.incr(limit.successKey).then(() => deps.quota.redis.expire(limit.successKey, limit.windowS)).catch(() => {})
}

/** The caller's admission limits, `tokens` counted against its tokens per minute. */
export function admissionLimits (caller: Caller, tokens: number): AdmissionLimits {
  const { token, user } = caller.record
  // Cached records written before these limits existed have none (|| 0).
  return {
    userConcurrency: user.concurrencyLimit || 0,
    tokenConcurrency: token.concurrencyLimit || 0,
    tokenRpm: token.rpmLimit || 0,
    tokenTpm: token.tpmLimit || 0,
    tokens
  }
}

/** One reservation: `amount` quota units under `requestId`, its admission limits checked in the same script run. */
export interface Reservation {
  requestId: string
  amount: number
  limits: AdmissionLimits
  /** The caller's group, named by a refusal for the user's requests in flight. */
  group: string
  /** The model asked for: an entitlement item for it may pay instead of the wallet. */
  model: string
}

/** What admission holds for a request: its lease, and the entitlement item paying (none: the wallet). */
export interface Admitted {
  lease?: Lease | undefined
  paidBy?: Entitlement | undefined
}

/** The user's active entitlement items for `model`, soonest ending first (the record keeps them in that order). */
function entitlementsFor (caller: Caller, model: string, nowS: number): Entitlement[] {
  const all = caller.record.user.entitlements
  if (all === undefined || all.length === 0) return []
  return all.filter((e) => e.model === model && e.endsAt > nowS)
}

/**
 * The attempts of a reservation by the user's billing preference: one per entitlement item that
 * may pay (the wallet in between or after, as preferred), or the wallet alone. With several items,
 * all but the last are tried alone, so an item that is spent passes the request to the next one.
 */
function payPlan (caller: Caller, model: string): Array<Entitlement | undefined> | 'none' {
  const preference = caller.record.user.billingPreference ?? 'subscription_first'
  if (preference === 'wallet_only') return [undefined]
  const items = entitlementsFor(caller, model, Math.floor(Date.now() / 1000))
  if (items.length === 0) return preference === 'subscription_only' ? 'none' : [undefined]
  return items
}

function orderOf (preference: string, index: number, count: number): PayOrder {
  if (preference === 'subscription_only') return 'entitlement_only'
  if (preference === 'wallet_first') return index === 0 ? 'wallet_first' : 'entitlement_only'
  return index === count - 1 ? 'entitlement_first' : 'entitlement_only'
}

/**
 * The atomic reservation of `amount` against the caller's user (or, by the user's billing
 * preference, an entitlement item of an active subscription for the model) and token
 * (ARCHITECTURE.md invariant 2) with its admission limits; refuses (429, 403, or 503 when Redis is
 * unreachable: fail closed). Returns the lease to release once the request is over and the item
 * paying. From here on the caller owes exactly one usage event.
 */
export async function admit (deps: RelayDeps, req: FastifyRequest, caller: Caller, r: Reservation, parent?: Span): Promise<Admitted> {
  const plan = payPlan(caller, r.model)
  if (plan === 'none') {
    countRefusal('entitlement_quota')
    throw new RelayError(403, 'insufficient_quota', 'insufficient_quota', RM.noEntitlement, { model: r.model })
  }
  const { token, user } = caller.record
  const { limits } = r
  // A child span of the relay request's (tracing on only).
  const span = parent === undefined ? undefined : startSpan('quota.reserve', parent)
  let admitted: ReserveOutcome | undefined
  let paying: Entitlement | undefined
  try {
    for (let i = 0; i < plan.length; i++) {
      paying = plan[i]
      admitted = await deps.quota.reserve({
        requestId: r.requestId,
        userId: user.id,
        tokenId: token.id,
        unlimited: token.unlimited,
        amount: r.amount,
        ttlSeconds: RESERVATION_TTL_S,
        limits,
        loadUser: async () => (await deps.db.selectFrom('users').select('quota').where('id', '=', user.id).executeTakeFirstOrThrow()).quota,
        loadToken: async () => (await deps.db.selectFrom('tokens').select('remain_quota').where('id', '=', token.id).executeTakeFirstOrThrow()).remain_quota,
        ...(paying === undefined ? {} : { entitlement: charge(deps, paying, r.amount, orderOf(user.billingPreference ?? 'subscription_first', i, plan.length)) })
      })
      if (admitted.ok || (admitted.reason !== 'entitlement_quota' && admitted.reason !== 'user_quota')) break
    }
  } catch (err) {
    // Fail closed: never admit against per-process counters.
    req.log.error({ err }, 'quota reservation failed')
    countRefusal('redis_down')
    span?.setStatus({ code: SpanStatusCode.ERROR, message: 'quota store unavailable' })
    span?.end()
    throw new RelayError(503, 'service_unavailable', 'quota_store_unavailable', RM.redisDown)
  }
  if (admitted === undefined) throw new Error('no reservation was attempted')
  if (span !== undefined) {
    span.setAttribute('modelgate.admitted', admitted.ok)
    span.end()
  }
  if (!admitted.ok) {
    countRefusal(admitted.reason)
    if ('retryAfterS' in admitted) throw limitRefusal(admitted.reason, admitted.retryAfterS, limits, r.group)
    if (admitted.reason === 'token_quota') throw new RelayError(403, 'insufficient_quota', 'insufficient_quota', RM.tokenQuota)
    // Only a user who pays by subscription alone is refused for the item; otherwise the wallet was short too.
    if (admitted.reason === 'entitlement_quota' && user.billingPreference === 'subscription_only') throw new RelayError(403, 'insufficient_quota', 'insufficient_quota', RM.noEntitlement, { model: r.model })
    throw new RelayError(403, 'insufficient_quota', 'insufficient_quota', RM.userQuota)
  }
  reservationsAdmitted.inc()
  return { lease: admitted.lease, paidBy: admitted.paidBy === undefined ? undefined : paying }
}

/** What an entitlement item is offered for a reservation: its cost in its unit, and how to load its balance. */
function charge (deps: RelayDeps, e: Entitlement, amount: number, order: PayOrder): EntitlementCharge {
  return {
    itemId: e.itemId,
    cost: e.quotaType === 1 ? 1 : amount,
    order,
    ttlSeconds: e.endsAt - Math.floor(Date.now() / 1000) + 3600,
    // What is left in Postgres, and nothing once the subscription is no longer active (ended or
    // cancelled since the caller's record was cached).
    load: async () => {
      const row = await deps.db.selectFrom('user_subscription_items as i').innerJoin('user_subscriptions as s', 's.id', 'i.user_subscription_id')
        .select(['i.amount_total', 'i.amount_used'])
        .where('i.id', '=', e.itemId).where('s.status', '=', 'active').where('s.end_time', '>', Math.floor(Date.now() / 1000))
        .executeTakeFirst()
      return row === undefined ? 0 : Math.max(0, row.amount_total - row.amount_used)
    }
  }
}

/** The answer to a request refused by an admission limit: 429 with Retry-After. */
function limitRefusal (reason: 'user_concurrency' | 'token_concurrency' | 'token_rpm' | 'token_tpm', retryAfterS: number, limits: AdmissionLimits, group: string): RelayError {
  const seconds = String(Math.max(1, Math.ceil(retryAfterS)))
  let err: RelayError
  switch (reason) {
    case 'user_concurrency':
      err = new RelayError(429, 'rate_limit_exceeded', 'concurrency_limit_exceeded', RM.loadSaturated, { group })
      break
    case 'token_concurrency':
      err = new RelayError(429, 'rate_limit_exceeded', 'concurrency_limit_exceeded', RM.tokenBusy, { limit: String(limits.tokenConcurrency) })
      break
    case 'token_rpm':
      err = new RelayError(429, 'rate_limit_exceeded', 'rate_limit_exceeded', RM.tokenRpm, { limit: String(limits.tokenRpm), seconds })
      break
    case 'token_tpm':
      err = new RelayError(429, 'rate_limit_exceeded', 'tokens_limit_exceeded', RM.tokenTpm, { limit: String(limits.tokenTpm), seconds })
      break
  }
  err.headers = { 'retry-after': seconds }
  return err
}
