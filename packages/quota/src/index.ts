import calculateSlot from 'cluster-key-slot'
import type { Cluster, Redis } from 'ioredis'

/**
 * Hot balances and in-flight reservations in Redis. Postgres stays the system of record
 * (ARCHITECTURE.md invariant 1): a balance key holds the Postgres balance minus the reservations of
 * requests not yet settled, and can always be rebuilt from Postgres.
 *
 * Every key belongs to one user and carries the user's id as its hash tag, so that everything one
 * reservation touches (the user's, the token's and the entitlement item's balances, the record,
 * the leases and the rate window) sits in one hash slot of a Redis Cluster. Keys (under the
 * client's keyPrefix): `bal:{<userId>}:u`, `bal:{<userId>}:t:<tokenId>`, `bal:{<userId>}:e:<itemId>`
 * (what is left of a subscription's entitlement item), `resv:{<userId>}:<requestId>`,
 * `lease:{<userId>}:u`, `lease:{<userId>}:t:<tokenId>`, `rate:{<userId>}:t:<tokenId>`. A token
 * and an entitlement item never change owner, so their balances are named by owner and id.
 */
export type BalanceKind = 'user' | 'token' | 'entitlement'
const KIND_TAG: Record<BalanceKind, string> = { user: 'u', token: 't', entitlement: 'e' }
const tag = (userId: number): string => `{${userId}}`
/** A user's balance key; a token's or an item's also names its owner (`userId`). */
export function balanceKey (kind: 'user', userId: number): string
export function balanceKey (kind: BalanceKind, id: number, userId: number): string
export function balanceKey (kind: BalanceKind, id: number, userId?: number): string {
  if (kind === 'user') return `bal:${tag(id)}:u`
  if (userId === undefined) throw new Error(`the owner of ${kind} ${id} is needed for its balance key`)
  return `bal:${tag(userId)}:${KIND_TAG[kind]}:${id}`
}
export const reservationKey = (userId: number, requestId: string): string => `resv:${tag(userId)}:${requestId}`

/** Keys of the admission limits: in-flight leases per user and token, request/token rates per token. */
export const leaseKey = (userId: number, tokenId?: number): string => tokenId === undefined ? `lease:${tag(userId)}:u` : `lease:${tag(userId)}:t:${tokenId}`
export const rateKey = (userId: number, tokenId: number): string => `rate:${tag(userId)}:t:${tokenId}`

/** The hash slot of a user's keys on a Redis Cluster. */
export const userSlot = (userId: number): number => calculateSlot(String(userId))

// Each reservation checks both balances and takes the amount from both, or from neither
// (ARCHITECTURE.md invariant 2); missing balances are reported so the caller can load them. One run
// takes any number of reservations, one after another, so the reservations of a busy moment cost
// one command instead of one each. Each reservation sends only what it uses (Redis' time in a run
// grows with the number of keys and arguments): its shape first (1: admission limits, 2: an
// entitlement item, 3: both), then its keys (user, token and reservation, the lease sets and the
// rate window when limited, the item's balance when entitled) and arguments in that order.
//
// The payer is the user's wallet or, by the user's billing preference (the mode: 0 wallet only,
// 1 entitlement first, 2 wallet first, 3 entitlement only), an entitlement item of an active
// subscription (its own balance key, the cost in the item's unit: quota, or 1 for a request). The
// token's balance is a spending cap on the key whatever pays, so it is always checked and taken.
// The reservation record names the item and its cost, so settlement corrects the right balance.
//
// The same run enforces the admission limits, so they cost no round trip of their own: a user's
// and a token's requests in flight (a sorted set of leases scored by expiry, so a crashed
// gateway's leases lapse), and a token's requests and tokens per minute (a sliding window: this
// minute's counts plus last minute's, weighed by the part of it still inside the last 60 s).
// Limits of 0 cost nothing; nothing is written unless every check passes. A request id reserved
// before is refused (DUP) at the first write, the record's SET NX, so it takes nothing.
const RESERVE = `
local now_ms
local function now ()
  if not now_ms then
    local t = redis.call('TIME')
    now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now_ms
end
local function busy (k, limit)
  if limit <= 0 then return false end
  redis.call('ZREMRANGEBYSCORE', k, '-inf', now())
  return redis.call('ZCARD', k) >= limit
end
-- Milliseconds until prev * (1 - f) + cur + need <= limit, f being the part of the minute gone.
local function wait_ms (prev, cur, need, limit, into)
  if cur + need > limit then
    local after = 0
    if cur > 0 then after = math.max(0, 1 - (limit - need) / cur) end
    return (60000 - into) + 60000 * after
  end
  if prev <= 0 then return 0 end
  return math.max(0, 60000 * (1 - (limit - cur - need) / prev) - into)
end
-- One reservation: keys from KEYS[k], arguments from ARGV[a] (the item's shape first). Returns
-- the status, the user's and the token's balances, the minute counted in (-1: none) or a retry
-- delay, and the paying item (0: the wallet).
local function reserve (k, a, shape)
  local uk, tk, rk = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  local text, unlimited, ttl, uid, tid = ARGV[a + 1], ARGV[a + 2] == '1', ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
  local amount = tonumber(text)
  local ulk, tlk, qk, ulim, tlim, rpm, tpm, est, lease, rid = nil, nil, nil, 0, 0, 0, 0, 0, 0, nil
  local ek, mode, ecost, item = nil, 0, 0, 0
  local nk, na = k + 3, a + 6
  if shape % 2 == 1 then
    ulk, tlk, qk = KEYS[nk], KEYS[nk + 1], KEYS[nk + 2]
    ulim, tlim, rpm, tpm = tonumber(ARGV[na]), tonumber(ARGV[na + 1]), tonumber(ARGV[na + 2]), tonumber(ARGV[na + 3])
    est, lease, rid = tonumber(ARGV[na + 4]), tonumber(ARGV[na + 5]), ARGV[na + 6]
    nk, na = nk + 3, na + 7
  end
  if shape >= 2 then
    ek = KEYS[nk]
    mode, ecost, item = tonumber(ARGV[na]), tonumber(ARGV[na + 1]), tonumber(ARGV[na + 2])
  end
  local ub = redis.call('GET', uk)
  if not ub then return 'MISS_USER', 0, 0, 0, 0 end
  ub = tonumber(ub)
  local tb = 0
  if not unlimited then
    tb = redis.call('GET', tk)
    if not tb then return 'MISS_TOKEN', 0, 0, 0, 0 end
    tb = tonumber(tb)
  end
  if busy(ulk, ulim) then return 'USER_BUSY', ub, tb, 1, 0 end
  if busy(tlk, tlim) then return 'TOKEN_BUSY', ub, tb, 1, 0 end
  local w, c, t, pc, pt
  if rpm > 0 or tpm > 0 then
    local n = now()
    w = math.floor(n / 60000)
    local h = redis.call('HMGET', qk, 'w', 'c', 't', 'pc', 'pt')
    local hw = tonumber(h[1]) or w
    c, t, pc, pt = tonumber(h[2]) or 0, tonumber(h[3]) or 0, tonumber(h[4]) or 0, tonumber(h[5]) or 0
    if hw ~= w then
      if hw == w - 1 then pc, pt = c, t else pc, pt = 0, 0 end
      c, t = 0, 0
    end
    local into = n % 60000
    local weight = 1 - into / 60000
    if rpm > 0 and pc * weight + c + 1 > rpm then
      return 'RPM', ub, tb, math.max(1, math.ceil(wait_ms(pc, c, 1, rpm, into) / 1000)), 0
    end
    local used = pt * weight + t
    if tpm > 0 and used > 0 and used + est > tpm then
      return 'TPM', ub, tb, math.max(1, math.ceil(wait_ms(pt, t, math.min(est, tpm), tpm, into) / 1000)), 0
    end
  end
  local wallet = ub > 0 and ub >= amount
  if mode == 0 and not wallet then return 'NO_USER', ub, tb, 0, 0 end
  if not unlimited and (tb <= 0 or tb < amount) then return 'NO_TOKEN', ub, tb, 0, 0 end
  local paid = 0
  if mode ~= 0 and not (mode == 2 and wallet) then
    local eb = redis.call('GET', ek)
    if not eb then return 'MISS_ENT', ub, tb, 0, 0 end
    eb = tonumber(eb)
    if eb > 0 and eb >= ecost then paid = item end
  end
  if paid == 0 then
    if mode == 3 then return 'NO_ENT', ub, tb, 0, 0 end
    if not wallet then return 'NO_USER', ub, tb, 0, 0 end
  end
  -- The record is written first, only if the request id is new: a duplicate takes nothing.
  local record = text .. '|' .. (unlimited and '1' or '0') .. '|' .. uid .. '|' .. tid .. '|' .. now()
  if paid ~= 0 then record = record .. '|' .. item .. '|' .. ecost end
  if not redis.call('SET', rk, record, 'NX', 'EX', ttl) then return 'DUP', 0, 0, 0, 0 end
  if paid == 0 then redis.call('DECRBY', uk, text) else redis.call('DECRBY', ek, ecost) end
  if not unlimited then redis.call('DECRBY', tk, text) end
  if ulim > 0 then
    redis.call('ZADD', ulk, now() + lease, rid)
    redis.call('PEXPIRE', ulk, lease * 2)
  end
  if tlim > 0 then
    redis.call('ZADD', tlk, now() + lease, rid)
    redis.call('PEXPIRE', tlk, lease * 2)
  end
  local left = ub
  if paid == 0 then left = ub - amount end
  if w then
    redis.call('HSET', qk, 'w', w, 'c', c + 1, 't', t + est, 'pc', pc, 'pt', pt)
    redis.call('PEXPIRE', qk, 120000)
    return 'OK', left, tb - amount, w, paid
  end
  return 'OK', left, tb - amount, -1, paid
end
-- Replies flat, five values a reservation.
local out = {}
local k, a, n = 1, 1, 0
while a <= #ARGV do
  local shape = tonumber(ARGV[a])
  local status, ub, tb, extra, paid = reserve(k, a, shape)
  out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] = status, ub, tb, extra, paid
  n = n + 5
  k = k + 3
  a = a + 6
  if shape % 2 == 1 then k, a = k + 3, a + 7 end
  if shape >= 2 then k, a = k + 1, a + 3 end
end
return out
`

// Ends the leases of finished requests and corrects their tokens-per-minute count by the
// difference between the tokens counted at admission and those used (keys in threes: user
// leases, token leases, token rates; arguments in threes: lease member, token difference, the
// minute the request was counted in, or -1).
const RELEASE = `
for i = 1, #KEYS / 3 do
  local k = 3 * i - 2
  local a = 3 * i - 2
  redis.call('ZREM', KEYS[k], ARGV[a])
  redis.call('ZREM', KEYS[k + 1], ARGV[a])
  local delta = tonumber(ARGV[a + 1])
  local w = tonumber(ARGV[a + 2])
  if delta ~= 0 and w >= 0 then
    local hw = tonumber(redis.call('HGET', KEYS[k + 2], 'w'))
    if hw == w then redis.call('HINCRBY', KEYS[k + 2], 't', delta)
    elseif hw == w + 1 then redis.call('HINCRBY', KEYS[k + 2], 'pt', delta) end
  end
end
return #KEYS / 3
`

// Pushes the expiry of live leases forward (keys: lease sets; arguments: the lease time, then
// the members in key order); leases already gone stay gone.
const RENEW = `
local t = redis.call('TIME')
local ms = tonumber(ARGV[1])
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ms
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], 'XX', expiry, ARGV[i + 1])
  redis.call('PEXPIRE', KEYS[i], ms * 2)
end
return #KEYS
`

// Sets a balance only if it still holds the value the caller read (reconciliation must not
// overwrite a reservation made meanwhile).
const COMPARE_AND_SET = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end
return 0
`

// Gives back (reserved - actual), or takes the shortfall, exactly once per reservation; for
// each reservation of the call (keys in fours: the reservation, the user's, the token's and the
// entitlement item's balances; arguments in twos: the actual cost in quota, and in the item's
// unit): 1 and the delta, or 0 and 0 when it was settled already or has expired (flat, two values
// a reservation). The payer's balance (the wallet, or the item the record names) gets its
// difference, the token's always.
const SETTLE = `
local out = {}
for i = 1, #KEYS / 4 do
  local k = 4 * i - 3
  local r = redis.call('GETDEL', KEYS[k])
  if not r then
    out[2 * i - 1], out[2 * i] = 0, 0
  else
    -- amount|unlimited|user|token|reserved at[|item|item amount]
    local reserved, unlimited, rest = string.match(r, '^([^|]*)|([^|]*)|(.*)$')
    local delta = tonumber(reserved) - tonumber(ARGV[2 * i - 1])
    local held = string.match(rest, '^[^|]*|[^|]*|[^|]*|[^|]*|([^|]*)$')
    if held then
      local edelta = tonumber(held) - tonumber(ARGV[2 * i])
      if edelta ~= 0 and redis.call('EXISTS', KEYS[k + 3]) == 1 then redis.call('INCRBY', KEYS[k + 3], edelta) end
    elseif delta ~= 0 and redis.call('EXISTS', KEYS[k + 1]) == 1 then
      redis.call('INCRBY', KEYS[k + 1], delta)
    end
    if delta ~= 0 and unlimited ~= '1' and redis.call('EXISTS', KEYS[k + 2]) == 1 then redis.call('INCRBY', KEYS[k + 2], delta) end
    out[2 * i - 1], out[2 * i] = 1, delta
  end
end
return out
`

const ADJUST = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end
return false
`

export type ReserveOutcome =
  /** `paidBy`: the entitlement item that pays, absent when the wallet does. */
  | { ok: true, userBalance: number, tokenBalance: number, lease?: Lease, paidBy?: number }
  | { ok: false, reason: 'user_quota' | 'token_quota' | 'entitlement_quota' | 'duplicate', userBalance: number, tokenBalance: number }
  | { ok: false, reason: LimitReason, userBalance: number, tokenBalance: number, retryAfterS: number }

/** Admission limits refused: the user's or the token's requests in flight, the token's requests or tokens per minute. */
export type LimitReason = 'user_concurrency' | 'token_concurrency' | 'token_rpm' | 'token_tpm'

/** Admission limits of one request; 0 means no limit. */
export interface AdmissionLimits {
  userConcurrency: number
  tokenConcurrency: number
  tokenRpm: number
  tokenTpm: number
  /** Tokens the request is expected to use, counted against tokenTpm at admission. */
  tokens: number
}

/** What an admitted request holds besides its quota, given back by {@link QuotaStore.release}. */
export interface Lease {
  readonly requestId: string
  readonly userId: number
  readonly tokenId: number
  readonly leased: boolean
  readonly tokens: number
  /** The minute (unix ms / 60000) the tokens were counted in, or -1 when no rate is kept. */
  readonly minute: number
}

export interface ReserveRequest {
  requestId: string
  userId: number
  tokenId: number
  /** Unlimited tokens draw on the user's balance only. */
  unlimited: boolean
  /** Quota units to hold until settlement. */
  amount: number
  /** How long an unsettled reservation lives; reconciliation repairs balances after expiry. */
  ttlSeconds: number
  /** Postgres balances, read only when Redis has none (cold cache, flush). */
  loadUser: () => Promise<number>
  loadToken: () => Promise<number>
  /** Admission limits checked in the same script run; none when absent. */
  limits?: AdmissionLimits
  /** An entitlement item that may pay instead of the wallet; the wallet alone when absent. */
  entitlement?: EntitlementCharge
}

/** Which pays first, the wallet or an entitlement item (the user's billing preference). */
export type PayOrder = 'entitlement_first' | 'wallet_first' | 'entitlement_only'
const PAY_MODE: Record<PayOrder, number> = { entitlement_first: 1, wallet_first: 2, entitlement_only: 3 }

/** An entitlement item offered to pay a reservation. */
export interface EntitlementCharge {
  itemId: number
  /** What the request costs the item, in its unit (quota units, or 1 for an item counted in requests). */
  cost: number
  order: PayOrder
  /** The item's balance in Postgres (total - used), read only when Redis has none. */
  load: () => Promise<number>
  /** How long a loaded balance may stay cached (the subscription's end, plus a margin). */
  ttlSeconds: number
}

/** Status, user balance, token balance, the minute counted in (-1: none) or a retry delay, the paying item (0: the wallet). */
type ReserveReply = [string, number, number, number, number]
interface PendingReserve { userId: number, keys: readonly string[], args: ReadonlyArray<string | number>, resolve: (v: ReserveReply) => void, reject: (err: unknown) => void }

interface Scripts {
  mgReserve: (numberOfKeys: number, ...keysThenArgs: Array<string | number>) => Promise<Array<string | number>>
  mgSettle: (numberOfKeys: number, ...keysThenActuals: Array<string | number>) => Promise<number[]>
  mgAdjust: (k1: string, delta: number) => Promise<number | null>
  mgCas: (k1: string, expected: string, value: string) => Promise<number>
  mgRelease: (numberOfKeys: number, ...keysThenArgs: Array<string | number>) => Promise<number>
  mgRenew: (numberOfKeys: number, ...keysThenArgs: Array<string | number>) => Promise<number>
}

const NO_LIMITS: AdmissionLimits = { userConcurrency: 0, tokenConcurrency: 0, tokenRpm: 0, tokenTpm: 0, tokens: 0 }
const LIMIT_REASONS: Record<string, LimitReason> = { USER_BUSY: 'user_concurrency', TOKEN_BUSY: 'token_concurrency', RPM: 'token_rpm', TPM: 'token_tpm' }

/**
 * Collects items until the event loop ends its current round of I/O, then hands them to `send`
 * together: what a busy gateway asks for in one round goes to Redis as one script run.
 */
function perRound<T> (send: (batch: T[]) => void): (item: T) => void {
  let pending: T[] = []
  return (item) => {
    pending.push(item)
    if (pending.length > 1) return
    setImmediate(() => {
      const batch = pending
      pending = []
      send(batch)
    })
  }
}

/** The keys and the arguments of one script run over a batch, each item's in turn. */
function scriptInput<T> (batch: readonly T[], keysOf: (item: T) => readonly string[], argsOf: (item: T) => ReadonlyArray<string | number>): [string[], Array<string | number>] {
  const keys: string[] = []
  const args: Array<string | number> = []
  for (const item of batch) {
    keys.push(...keysOf(item))
    args.push(...argsOf(item))
  }
  return [keys, args]
}

/** One reservation to settle: its actual cost, and the entitlement item that paid, if one did. */
export interface SettleItem {
  requestId: string
  userId: number
  tokenId: number
  /** Quota units owed. */
  actual: number
  itemId?: number
  /** The actual cost in the item's unit; `actual` when absent. */
  itemActual?: number
}

/** An open reservation: what a request holds until it is settled. */
export interface OpenReservation {
  requestId: string
  amount: number
  unlimited: boolean
  userId: number
  tokenId: number
  /** When it was taken (unix ms, Redis' clock); absent on reservations taken before this was recorded. */
  reservedAt?: number
  /** The entitlement item paying, and what it holds in the item's unit; absent when the wallet pays. */
  itemId?: number
  itemAmount?: number
}

/** A cached balance found by {@link QuotaStore.cachedBalances}: its id, its owner and its value. */
export interface CachedBalance { id: number, userId: number, value: number }

/**
 * Balances and reservations on one ioredis client (its keyPrefix applies): one server (or a
 * Sentinel-managed master), or a Redis Cluster, where each script run carries the keys of one
 * hash slot only (the reservations of one round are sent as one run per slot).
 */
export class QuotaStore {
  readonly #redis: (Redis | Cluster) & Scripts
  readonly #cluster: boolean
  readonly #queueReserve = perRound<PendingReserve>((batch) => { this.#sendReserves(batch) })
  readonly #queueRelease = perRound<Lease>((batch) => { this.#sendReleases(batch) })
  readonly #leaseMs: number
  /** Leases of this process's requests in flight, renewed while they run. */
  readonly #leases = new Set<Lease>()
  #renewTimer: NodeJS.Timeout | undefined

  /** The client the store runs on (for counters that live beside the balances). */
  get redis (): Redis | Cluster {
    return this.#redis
  }

  /**
   * `leaseMs`: how long a request's concurrency lease lives unless renewed; the process renews
   * its leases every third of that while their requests run, so the leases of a gateway that
   * died lapse within `leaseMs`.
   */
  constructor (redis: Redis | Cluster, opts: { leaseMs?: number } = {}) {
    this.#cluster = redis.isCluster
    this.#leaseMs = Math.max(300, Math.trunc(opts.leaseMs ?? 60_000))
    redis.defineCommand('mgRelease', { lua: RELEASE })
    redis.defineCommand('mgRenew', { lua: RENEW })
    redis.defineCommand('mgReserve', { lua: RESERVE })
    redis.defineCommand('mgSettle', { lua: SETTLE })
    redis.defineCommand('mgAdjust', { numberOfKeys: 1, lua: ADJUST })
    redis.defineCommand('mgCas', { numberOfKeys: 1, lua: COMPARE_AND_SET })
    this.#redis = redis as (Redis | Cluster) & Scripts
  }

  /** The batch as one group, or on a cluster as one group per hash slot (a script run's keys must share one). */
  #perSlot<T> (batch: readonly T[], userOf: (item: T) => number): T[][] {
    if (!this.#cluster) return [batch as T[]]
    const groups = new Map<number, T[]>()
    for (const item of batch) {
      const slot = userSlot(userOf(item))
      const group = groups.get(slot)
      if (group === undefined) groups.set(slot, [item])
      else group.push(item)
    }
    return [...groups.values()]
  }

  /**
   * Holds `amount` against the user (or the entitlement item that pays) and the token,
   * atomically; loads missing balances first.
   */
  async reserve (r: ReserveRequest): Promise<ReserveOutcome> {
    const e = r.entitlement
    const l = r.limits ?? NO_LIMITS
    const tokens = Math.max(0, Math.trunc(l.tokens))
    const limited = l.userConcurrency > 0 || l.tokenConcurrency > 0 || l.tokenRpm > 0 || l.tokenTpm > 0
    const userKey = balanceKey('user', r.userId)
    const tokenKey = balanceKey('token', r.tokenId, r.userId)
    const keys = [userKey, tokenKey, reservationKey(r.userId, r.requestId)]
    const args: Array<string | number> = [(limited ? 1 : 0) + (e === undefined ? 0 : 2), r.amount, r.unlimited ? '1' : '0', r.ttlSeconds, r.userId, r.tokenId]
    if (limited) {
      keys.push(leaseKey(r.userId), leaseKey(r.userId, r.tokenId), rateKey(r.userId, r.tokenId))
      args.push(l.userConcurrency, l.tokenConcurrency, l.tokenRpm, l.tokenTpm, tokens, this.#leaseMs, r.requestId)
    }
    if (e !== undefined) {
      keys.push(balanceKey('entitlement', e.itemId, r.userId))
      args.push(PAY_MODE[e.order], e.cost, e.itemId)
    }
    for (let attempt = 0; attempt < 4; attempt++) {
      const [status, ub, tb, extra, paid] = await this.#reserveScript(r.userId, keys, args)
      switch (status) {
        case 'OK': {
          const paidBy = Number(paid) === 0 ? {} : { paidBy: Number(paid) }
          const leased = l.userConcurrency > 0 || l.tokenConcurrency > 0
          const minute = Number(extra)
          if (!leased && minute < 0) return { ok: true, userBalance: Number(ub), tokenBalance: Number(tb), ...paidBy }
          const lease: Lease = { requestId: r.requestId, userId: r.userId, tokenId: r.tokenId, leased, tokens, minute }
          if (leased) this.#hold(lease)
          return { ok: true, userBalance: Number(ub), tokenBalance: Number(tb), lease, ...paidBy }
        }
        case 'USER_BUSY':
        case 'TOKEN_BUSY':
        case 'RPM':
        case 'TPM':
          return { ok: false, reason: LIMIT_REASONS[status]!, userBalance: Number(ub), tokenBalance: Number(tb), retryAfterS: Number(extra) }
        case 'NO_USER': return { ok: false, reason: 'user_quota', userBalance: Number(ub), tokenBalance: Number(tb) }
        case 'NO_TOKEN': return { ok: false, reason: 'token_quota', userBalance: Number(ub), tokenBalance: Number(tb) }
        case 'NO_ENT': return { ok: false, reason: 'entitlement_quota', userBalance: Number(ub), tokenBalance: Number(tb) }
        case 'DUP': return { ok: false, reason: 'duplicate', userBalance: 0, tokenBalance: 0 }
        case 'MISS_USER':
          // NX: when several gateways miss at once, the first load wins and none overwrites a live balance.
          await this.#redis.set(userKey, String(await r.loadUser()), 'NX')
          break
        case 'MISS_TOKEN':
          await this.#redis.set(tokenKey, String(await r.loadToken()), 'NX')
          break
        case 'MISS_ENT':
          await this.#redis.set(balanceKey('entitlement', e!.itemId, r.userId), String(await e!.load()), 'EX', Math.max(60, Math.trunc(e!.ttlSeconds)), 'NX')
          break
        default: throw new Error(`unexpected reserve status ${status}`)
      }
    }
    throw new Error('balances could not be loaded into Redis')
  }

  /**
   * Queues one reservation for the script. The reservations asked for while the event loop
   * handles one round of I/O (a busy gateway parses many requests in one) go to Redis together
   * at the end of that round, as one script run (one a hash slot on a cluster): one command, one
   * write and one reply instead of one each, and no waiting beyond the round. Each reservation is
   * still all-or-nothing.
   */
  #reserveScript (userId: number, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<ReserveReply> {
    return new Promise((resolve, reject) => { this.#queueReserve({ userId, keys, args, resolve, reject }) })
  }

  #sendReserves (all: PendingReserve[]): void {
    for (const batch of this.#perSlot(all, (b) => b.userId)) this.#sendReserveRun(batch)
  }

  #sendReserveRun (batch: PendingReserve[]): void {
    const [keys, args] = scriptInput(batch, (b) => b.keys, (b) => b.args)
    this.#redis.mgReserve(keys.length, ...keys, ...args).then((flat) => {
      batch.forEach((b, i) => {
        if (flat.length < 5 * (i + 1)) b.reject(new Error('no reply for a reservation'))
        else b.resolve(flat.slice(5 * i, 5 * i + 5) as ReserveReply)
      })
    }, (err: unknown) => { for (const b of batch) b.reject(err) })
  }

  /**
   * Gives back what an ended request held besides quota (finish, error or abort): its
   * concurrency leases, and the difference between the tokens counted at admission and
   * `usedTokens` in its token's per-minute window. Releases of one tick go out as one script run;
   * never rejects (a lease that cannot be released lapses on its own).
   */
  release (lease: Lease, usedTokens: number): void {
    if (lease.leased) this.#leases.delete(lease)
    this.#queueRelease({ ...lease, tokens: lease.minute < 0 ? 0 : Math.trunc(usedTokens) - lease.tokens })
  }

  #sendReleases (all: Lease[]): void {
    for (const batch of this.#perSlot(all, (l) => l.userId)) {
      const [keys, args] = scriptInput(batch,
        (l) => [leaseKey(l.userId), leaseKey(l.userId, l.tokenId), rateKey(l.userId, l.tokenId)],
        (l) => [l.requestId, l.tokens, l.minute])
      this.#redis.mgRelease(keys.length, ...keys, ...args).catch(() => {})
    }
  }

  #hold (lease: Lease): void {
    this.#leases.add(lease)
    if (this.#renewTimer !== undefined) return
    this.#renewTimer = setInterval(() => { this.#renew() }, Math.floor(this.#leaseMs / 3))
    this.#renewTimer.unref()
  }

  /** Renews every lease this process holds, in one script run. */
  #renew (): void {
    if (this.#leases.size === 0) {
      clearInterval(this.#renewTimer)
      this.#renewTimer = undefined
      return
    }
    for (const batch of this.#perSlot([...this.#leases], (l) => l.userId)) {
      const keys: string[] = []
      const members: string[] = []
      for (const l of batch) {
        keys.push(leaseKey(l.userId), leaseKey(l.userId, l.tokenId))
        members.push(l.requestId, l.requestId)
      }
      this.#redis.mgRenew(keys.length, ...keys, this.#leaseMs, ...members).catch(() => {})
    }
  }

  /** Stops renewing leases (the process is going away; its leases lapse if not released). */
  stopRenewing (): void {
    clearInterval(this.#renewTimer)
    this.#renewTimer = undefined
    this.#leases.clear()
  }

  /**
   * Replaces the reservation of `requestId` by the actual cost: the difference goes back to (or
   * is taken from) the payer's and the token's balances. Returns the difference, or undefined
   * when the reservation was already settled or has expired (a second call changes nothing).
   */
  async settle (requestId: string, userId: number, tokenId: number, actual: number): Promise<number | undefined> {
    return (await this.settleMany([{ requestId, userId, tokenId, actual }]))[0]
  }

  /**
   * {@link settle} for many reservations in one script run (one a hash slot on a cluster): one
   * round trip for a whole batch. A reservation paid by an entitlement item names it (`itemId`)
   * with the actual cost in the item's unit (`itemActual`: quota units, or the requests counted).
   */
  async settleMany (items: readonly SettleItem[]): Promise<Array<number | undefined>> {
    if (items.length === 0) return []
    const out = new Map<SettleItem, number | undefined>()
    await Promise.all(this.#perSlot(items, (i) => i.userId).map(async (batch) => {
      const keys = batch.flatMap((i) => [reservationKey(i.userId, i.requestId), balanceKey('user', i.userId), balanceKey('token', i.tokenId, i.userId), balanceKey('entitlement', i.itemId ?? 0, i.userId)])
      const reply = await this.#redis.mgSettle(keys.length, ...keys, ...batch.flatMap((i) => [i.actual, i.itemActual ?? i.actual]))
      batch.forEach((item, i) => { out.set(item, reply[2 * i] === 1 ? Number(reply[2 * i + 1]) : undefined) })
    }))
    return items.map((item) => out.get(item))
  }

  /**
   * Applies a change made in Postgres (top-up, admin edit) to a cached balance, if cached. A
   * token's or an item's balance also names its owner.
   */
  async adjust (kind: 'user', id: number, delta: number): Promise<void>
  async adjust (kind: BalanceKind, id: number, delta: number, owner: number): Promise<void>
  async adjust (kind: BalanceKind, id: number, delta: number, owner?: number): Promise<void> {
    if (delta !== 0) await this.#redis.mgAdjust(balanceKey(kind, id, owner ?? id), delta)
  }

  /** Sets a cached balance outright (reconciliation, tests). */
  async setBalance (kind: 'user', id: number, value: number): Promise<void>
  async setBalance (kind: BalanceKind, id: number, value: number, owner: number): Promise<void>
  async setBalance (kind: BalanceKind, id: number, value: number, owner?: number): Promise<void> {
    await this.#redis.set(balanceKey(kind, id, owner ?? id), String(value))
  }

  /** The cached balance, or undefined when not cached. */
  async balance (kind: 'user', id: number): Promise<number | undefined>
  async balance (kind: BalanceKind, id: number, owner: number): Promise<number | undefined>
  async balance (kind: BalanceKind, id: number, owner?: number): Promise<number | undefined> {
    const v = await this.#redis.get(balanceKey(kind, id, owner ?? id))
    return v === null ? undefined : Number(v)
  }

  /** Sets the balance of `kind` `id` (owned by `owner`) to `value` only if it still holds `expected`; true when set. */
  async compareAndSet (kind: BalanceKind, id: number, owner: number, expected: number, value: number): Promise<boolean> {
    return await this.#redis.mgCas(balanceKey(kind, id, owner), String(expected), String(value)) === 1
  }

  /**
   * Each page of key names (without the keyPrefix) matching `match`, with their values: SCAN
   * does not block Redis. On a cluster every master is scanned, and values are read per key
   * (a page's keys lie in many slots).
   */
  async * #scan (match: string): AsyncGenerator<Array<[string, string]>> {
    for await (const names of this.#scanNames(match)) {
      const values = this.#cluster ? await Promise.all(names.map(async (n) => await this.#redis.get(n))) : await this.#redis.mget(...names)
      const page: Array<[string, string]> = []
      names.forEach((name, i) => {
        const v = values[i]
        if (v != null) page.push([name, v])
      })
      yield page
    }
  }

  /** Each non-empty page of key names (without the keyPrefix) matching `match`, on every master. */
  async * #scanNames (match: string): AsyncGenerator<string[]> {
    const prefix = this.#redis.options.keyPrefix ?? ''
    const nodes: Redis[] = this.#cluster ? (this.#redis as Cluster).nodes('master') : [this.#redis as Redis]
    for (const node of nodes) {
      for await (const keys of node.scanStream({ match: `${prefix}${match}`, count: 500 }) as AsyncIterable<string[]>) {
        if (keys.length > 0) yield keys.map((k) => k.slice(prefix.length))
      }
    }
  }

  /**
   * Deletes balances cached under the names of releases before the hash-tagged keys
   * (`bal:u:<id>`, `bal:t:<id>`, `bal:e:<id>`), which nothing reads any more and which would
   * otherwise stay (the other old keys expire by themselves); returns how many. Run by the
   * reconciliation job, so that balances an old gateway still cached during a rolling upgrade go too.
   */
  async dropLegacyBalances (): Promise<number> {
    let dropped = 0
    for await (const names of this.#scanNames('bal:[ute]:*')) dropped += await this.#delete(names)
    return dropped
  }

  /**
   * Deletes `keys`, returning how many existed: one DEL on one server, one a key on a cluster
   * (the keys may lie in many slots).
   */
  async #delete (keys: readonly string[]): Promise<number> {
    if (keys.length === 0) return 0
    if (!this.#cluster) return await this.#redis.del(...keys)
    const counts = await Promise.all(keys.map(async (k) => await this.#redis.del(k)))
    return counts.reduce((a, b) => a + b, 0)
  }

  /** Every cached balance of one kind, with its owner. */
  async cachedBalances (kind: BalanceKind): Promise<CachedBalance[]> {
    const out: CachedBalance[] = []
    const match = kind === 'user' ? 'bal:{*}:u' : `bal:{*}:${KIND_TAG[kind]}:*`
    const shape = kind === 'user' ? /^bal:\{(\d+)\}:u$/ : new RegExp(`^bal:\\{(\\d+)\\}:${KIND_TAG[kind]}:(\\d+)$`)
    for await (const page of this.#scan(match)) {
      for (const [name, value] of page) {
        const m = shape.exec(name)
        if (m === null) continue
        const userId = Number(m[1])
        out.push({ id: kind === 'user' ? userId : Number(m[2]), userId, value: Number(value) })
      }
    }
    return out
  }

  /** Every open reservation (SCAN). */
  async openReservations (): Promise<OpenReservation[]> {
    const out: OpenReservation[] = []
    for await (const page of this.#scan('resv:{*}:*')) {
      for (const [name, value] of page) {
        const requestId = name.slice(name.indexOf('}:') + 2)
        const [amount, unlimited, userId, tokenId, at, item, itemAmount] = value.split('|')
        if (amount === undefined || userId === undefined) continue
        out.push({
          requestId, amount: Number(amount), unlimited: unlimited === '1', userId: Number(userId), tokenId: Number(tokenId ?? 0),
          ...(at === undefined ? {} : { reservedAt: Number(at) }),
          ...(item === undefined ? {} : { itemId: Number(item), itemAmount: Number(itemAmount) })
        })
      }
    }
    return out
  }

  /** Drops cached balances so the next request loads them from Postgres (tokens' and items' of one owner). */
  async forget (kind: 'user', ids: number | readonly number[]): Promise<void>
  async forget (kind: BalanceKind, ids: number | readonly number[], owner: number): Promise<void>
  async forget (kind: BalanceKind, ids: number | readonly number[], owner?: number): Promise<void> {
    await this.#delete((typeof ids === 'number' ? [ids] : ids).map((id) => balanceKey(kind, id, owner ?? id)))
  }
}
