import type { Redis } from 'ioredis'

/**
 * Hot balances and in-flight reservations in Redis. Postgres stays the system of record
 * (DESIGN.md invariant 1): a balance key holds the Postgres balance minus the reservations of
 * requests not yet settled, and can always be rebuilt from Postgres.
 *
 * Keys (under the client's keyPrefix): `bal:u:<userId>`, `bal:t:<tokenId>`, `resv:<requestId>`.
 */
export const balanceKey = (kind: 'user' | 'token', id: number): string => `bal:${kind === 'user' ? 'u' : 't'}:${id}`
export const reservationKey = (requestId: string): string => `resv:${requestId}`

// Each reservation checks both balances and takes the amount from both, or from neither
// (DESIGN.md invariant 2); missing balances are reported so the caller can load them. One run
// takes any number of reservations (keys in threes, arguments in fives), one after another, so
// the reservations of a busy moment cost one command instead of one each.
const RESERVE = `
local function reserve (uk, tk, rk, text, unlimited, ttl, uid, tid)
  local amount = tonumber(text)
  if redis.call('EXISTS', rk) == 1 then return {'DUP', 0, 0} end
  local ub = redis.call('GET', uk)
  if not ub then return {'MISS_USER', 0, 0} end
  ub = tonumber(ub)
  local tb = 0
  if not unlimited then
    tb = redis.call('GET', tk)
    if not tb then return {'MISS_TOKEN', 0, 0} end
    tb = tonumber(tb)
  end
  if ub <= 0 or ub < amount then return {'NO_USER', ub, tb} end
  if not unlimited and (tb <= 0 or tb < amount) then return {'NO_TOKEN', ub, tb} end
  redis.call('DECRBY', uk, text)
  if not unlimited then redis.call('DECRBY', tk, text) end
  redis.call('SET', rk, text .. '|' .. (unlimited and '1' or '0') .. '|' .. uid .. '|' .. tid, 'EX', ttl)
  return {'OK', ub - amount, tb - amount}
end
local out = {}
for i = 1, #KEYS / 3 do
  local k = 3 * i - 2
  local a = 5 * i - 4
  out[i] = reserve(KEYS[k], KEYS[k + 1], KEYS[k + 2], ARGV[a], ARGV[a + 1] == '1', tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4])
end
return out
`

// Sets a balance only if it still holds the value the caller read (reconciliation must not
// overwrite a reservation made meanwhile).
const COMPARE_AND_SET = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end
return 0
`

// Gives back (reserved - actual), or takes the shortfall, exactly once per reservation; for
// each reservation of the call (keys in threes, one actual cost each): {1, delta} or {0, 0}
// when it was settled already or has expired.
const SETTLE = `
local out = {}
for i = 1, #ARGV do
  local k = 3 * i - 2
  local r = redis.call('GET', KEYS[k])
  if not r then
    out[i] = {0, 0}
  else
    local sep = string.find(r, '|', 1, true)
    local reserved = tonumber(string.sub(r, 1, sep - 1))
    local unlimited = string.sub(r, sep + 1, sep + 1) == '1'
    local delta = reserved - tonumber(ARGV[i])
    if delta ~= 0 then
      if redis.call('EXISTS', KEYS[k + 1]) == 1 then redis.call('INCRBY', KEYS[k + 1], delta) end
      if not unlimited and redis.call('EXISTS', KEYS[k + 2]) == 1 then redis.call('INCRBY', KEYS[k + 2], delta) end
    end
    redis.call('DEL', KEYS[k])
    out[i] = {1, delta}
  end
end
return out
`

const ADJUST = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end
return false
`

export type ReserveOutcome =
  | { ok: true, userBalance: number, tokenBalance: number }
  | { ok: false, reason: 'user_quota' | 'token_quota' | 'duplicate', userBalance: number, tokenBalance: number }

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
}

type ReserveKeys = readonly [userKey: string, tokenKey: string, reservationKey: string]
type ReserveArgs = readonly [amount: number, unlimited: '1' | '0', ttl: number, userId: number, tokenId: number]
type ReserveReply = [string, number, number]
interface PendingReserve { keys: ReserveKeys, args: ReserveArgs, resolve: (v: ReserveReply) => void, reject: (err: unknown) => void }

interface Scripts {
  mgReserve: (numberOfKeys: number, ...keysThenArgs: Array<string | number>) => Promise<ReserveReply[]>
  mgSettle: (numberOfKeys: number, ...keysThenActuals: Array<string | number>) => Promise<Array<[number, number]>>
  mgAdjust: (k1: string, delta: number) => Promise<number | null>
  mgCas: (k1: string, expected: string, value: string) => Promise<number>
}

/** An open reservation: what a request holds until it is settled. */
export interface OpenReservation { requestId: string, amount: number, unlimited: boolean, userId: number, tokenId: number }

/** Balances and reservations on one ioredis client (its keyPrefix applies). */
export class QuotaStore {
  readonly #redis: Redis & Scripts
  #reserving: PendingReserve[] = []

  /** The client the store runs on (for counters that live beside the balances). */
  get redis (): Redis {
    return this.#redis
  }

  constructor (redis: Redis) {
    redis.defineCommand('mgReserve', { lua: RESERVE })
    redis.defineCommand('mgSettle', { lua: SETTLE })
    redis.defineCommand('mgAdjust', { numberOfKeys: 1, lua: ADJUST })
    redis.defineCommand('mgCas', { numberOfKeys: 1, lua: COMPARE_AND_SET })
    this.#redis = redis as Redis & Scripts
  }

  /** Holds `amount` against the user and the token, atomically; loads missing balances first. */
  async reserve (r: ReserveRequest): Promise<ReserveOutcome> {
    const keys = [balanceKey('user', r.userId), balanceKey('token', r.tokenId), reservationKey(r.requestId)] as const
    for (let attempt = 0; attempt < 3; attempt++) {
      const [status, ub, tb] = await this.#reserveScript(keys, [r.amount, r.unlimited ? '1' : '0', r.ttlSeconds, r.userId, r.tokenId])
      switch (status) {
        case 'OK': return { ok: true, userBalance: Number(ub), tokenBalance: Number(tb) }
        case 'NO_USER': return { ok: false, reason: 'user_quota', userBalance: Number(ub), tokenBalance: Number(tb) }
        case 'NO_TOKEN': return { ok: false, reason: 'token_quota', userBalance: Number(ub), tokenBalance: Number(tb) }
        case 'DUP': return { ok: false, reason: 'duplicate', userBalance: 0, tokenBalance: 0 }
        case 'MISS_USER':
          // NX: when several gateways miss at once, the first load wins and none overwrites a live balance.
          await this.#redis.set(keys[0], String(await r.loadUser()), 'NX')
          break
        case 'MISS_TOKEN':
          await this.#redis.set(keys[1], String(await r.loadToken()), 'NX')
          break
        default: throw new Error(`unexpected reserve status ${status}`)
      }
    }
    throw new Error('balances could not be loaded into Redis')
  }

  /**
   * Queues one reservation for the script. The reservations asked for while the event loop
   * handles one round of I/O (a busy gateway parses many requests in one) go to Redis together
   * at the end of that round, as one script run: one command, one write and one reply instead of
   * one each, and no waiting beyond the round. Each reservation is still all-or-nothing.
   */
  #reserveScript (keys: ReserveKeys, args: ReserveArgs): Promise<ReserveReply> {
    return new Promise((resolve, reject) => {
      this.#reserving.push({ keys, args, resolve, reject })
      if (this.#reserving.length === 1) setImmediate(() => { this.#sendReserves() })
    })
  }

  #sendReserves (): void {
    const batch = this.#reserving
    this.#reserving = []
    const keys: string[] = []
    const args: Array<string | number> = []
    for (const b of batch) {
      keys.push(...b.keys)
      args.push(...b.args)
    }
    this.#redis.mgReserve(keys.length, ...keys, ...args).then((replies) => {
      batch.forEach((b, i) => {
        const reply = replies[i]
        if (reply === undefined) b.reject(new Error('no reply for a reservation'))
        else b.resolve(reply)
      })
    }, (err: unknown) => { for (const b of batch) b.reject(err) })
  }

  /**
   * Replaces the reservation of `requestId` by the actual cost: the difference goes back to (or
   * is taken from) both balances. Returns the difference, or undefined when the reservation was
   * already settled or has expired (a second call changes nothing).
   */
  async settle (requestId: string, userId: number, tokenId: number, actual: number): Promise<number | undefined> {
    return (await this.settleMany([{ requestId, userId, tokenId, actual }]))[0]
  }

  /** {@link settle} for many reservations in one script run: one round trip for a whole batch. */
  async settleMany (items: ReadonlyArray<{ requestId: string, userId: number, tokenId: number, actual: number }>): Promise<Array<number | undefined>> {
    if (items.length === 0) return []
    const keys = items.flatMap((i) => [reservationKey(i.requestId), balanceKey('user', i.userId), balanceKey('token', i.tokenId)])
    const out = await this.#redis.mgSettle(keys.length, ...keys, ...items.map((i) => i.actual))
    return out.map(([ok, delta]) => (ok === 1 ? Number(delta) : undefined))
  }

  /** Applies a change made in Postgres (top-up, admin edit) to a cached balance, if cached. */
  async adjust (kind: 'user' | 'token', id: number, delta: number): Promise<void> {
    if (delta !== 0) await this.#redis.mgAdjust(balanceKey(kind, id), delta)
  }

  /** Sets a cached balance outright (reconciliation) */
  async setBalance (kind: 'user' | 'token', id: number, value: number): Promise<void> {
    await this.#redis.set(balanceKey(kind, id), String(value))
  }

  /** The cached balance, or undefined when not cached. */
  async balance (kind: 'user' | 'token', id: number): Promise<number | undefined> {
    const v = await this.#redis.get(balanceKey(kind, id))
    return v === null ? undefined : Number(v)
  }

  /** Sets `kind:id` to `value` only if it still holds `expected`; true when set. */
  async compareAndSet (kind: 'user' | 'token', id: number, expected: number, value: number): Promise<boolean> {
    return await this.#redis.mgCas(balanceKey(kind, id), String(expected), String(value)) === 1
  }

  /** Every cached balance of one kind (SCAN: does not block Redis). */
  async cachedBalances (kind: 'user' | 'token'): Promise<Map<number, number>> {
    const out = new Map<number, number>()
    const prefix = this.#redis.options.keyPrefix ?? ''
    for await (const keys of this.#redis.scanStream({ match: `${prefix}${balanceKey(kind, 0).slice(0, -1)}*`, count: 500 }) as AsyncIterable<string[]>) {
      if (keys.length === 0) continue
      const names = keys.map((k) => k.slice(prefix.length))
      const values = await this.#redis.mget(...names)
      names.forEach((name, i) => {
        const v = values[i]
        if (v != null) out.set(Number(name.slice(name.lastIndexOf(':') + 1)), Number(v))
      })
    }
    return out
  }

  /** Every open reservation (SCAN). */
  async openReservations (): Promise<OpenReservation[]> {
    const out: OpenReservation[] = []
    const prefix = this.#redis.options.keyPrefix ?? ''
    for await (const keys of this.#redis.scanStream({ match: `${prefix}resv:*`, count: 500 }) as AsyncIterable<string[]>) {
      if (keys.length === 0) continue
      const names = keys.map((k) => k.slice(prefix.length))
      const values = await this.#redis.mget(...names)
      names.forEach((name, i) => {
        const [amount, unlimited, userId, tokenId] = (values[i] ?? '').split('|')
        if (amount === undefined || userId === undefined) return
        out.push({ requestId: name.slice('resv:'.length), amount: Number(amount), unlimited: unlimited === '1', userId: Number(userId), tokenId: Number(tokenId ?? 0) })
      })
    }
    return out
  }

  /** Drops a cached balance so the next request loads it from Postgres. */
  async forget (kind: 'user' | 'token', id: number): Promise<void> {
    await this.#redis.del(balanceKey(kind, id))
  }
}
