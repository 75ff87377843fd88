import { createTestRedis } from '@modelgate/testing'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { type EntitlementCharge, leaseKey, QuotaStore, rateKey, type ReserveRequest } from '../src/index.js'

async function store (t: Test, prefix?: string) {
  const r = prefix === undefined ? await createTestRedis(t) : undefined
  const keyPrefix = prefix ?? r!.keyPrefix
  const redis = new Redis(r?.url ?? 'redis://127.0.0.1:6379', { keyPrefix })
  const quota = new QuotaStore(redis)
  t.teardown(() => { quota.stopRenewing(); redis.disconnect() })
  return { quota, keyPrefix, redis }
}

const charge = (over: Partial<EntitlementCharge> = {}): EntitlementCharge => ({ itemId: 7, cost: 100, order: 'entitlement_first', load: async () => 250, ttlSeconds: 3600, ...over })
const req = (over: Partial<ReserveRequest> = {}): ReserveRequest => ({
  requestId: `r-${Math.random()}`, userId: 1, tokenId: 1, unlimited: false, amount: 100, ttlSeconds: 3600,
  loadUser: async () => 1000, loadToken: async () => 100_000, ...over
})

t.test('50 concurrent requests on an entitlement with room for two: two paid by it, the rest by the wallet or refused by preference', async (t) => {
  const a = await store(t)
  const { quota: b } = await store(t, a.keyPrefix)
  let loads = 0
  const first = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a.quota : b).reserve(req({
    userId: 1, entitlement: charge({ order: 'entitlement_only', load: async () => { loads++; return 250 } })
  }))))
  t.equal(first.filter((r) => r.ok).length, 2, 'only what fits is admitted')
  t.ok(first.every((r) => r.ok ? r.paidBy === 7 : r.reason === 'entitlement_quota'), 'paid by the item, the others refused as the item is spent')
  t.equal(await a.quota.balance('entitlement', 7, 1), 50)
  t.equal(await a.quota.balance('user', 1), 1000, 'the wallet is untouched')
  t.equal(await a.quota.balance('token', 1, 1), 100_000 - 200, 'the token is a cap on the key whatever pays')
  t.ok(loads >= 1)

  // Subscription first: the item has 50 left, so the wallet pays.
  const next = await a.quota.reserve(req({ entitlement: charge() }))
  t.match(next, { ok: true })
  t.equal((next as { paidBy?: number }).paidBy, undefined, 'the wallet pays once the item is short')
  t.equal(await a.quota.balance('user', 1), 900)
})

t.test('wallet first uses the item only when the wallet is short; wallet only never reads it', async (t) => {
  const { quota } = await store(t)
  const w = await quota.reserve(req({ amount: 600, entitlement: charge({ order: 'wallet_first', cost: 600, load: async () => { throw new Error('not read while the wallet pays') } }) }))
  t.match(w, { ok: true })
  t.equal(await quota.balance('entitlement', 7, 1), undefined, 'not loaded')
  const e = await quota.reserve(req({ amount: 600, entitlement: charge({ order: 'wallet_first', cost: 600, load: async () => 5000 }) }))
  t.match(e, { ok: true, paidBy: 7 })
  t.equal(await quota.balance('user', 1), 400)
  t.equal(await quota.balance('entitlement', 7, 1), 4400)
  const none = await quota.reserve(req({ amount: 600 }))
  t.match(none, { ok: false, reason: 'user_quota' })
})

t.test('settlement corrects the paying item, not the wallet; a request-counted item takes one per request', async (t) => {
  const { quota } = await store(t)
  await quota.reserve(req({ requestId: 'q', amount: 300, entitlement: charge({ cost: 300, load: async () => 1000 }) }))
  t.equal(await quota.balance('entitlement', 7, 1), 700)
  t.same((await quota.openReservations()).map((r) => [r.requestId, r.itemId, r.itemAmount]), [['q', 7, 300]])
  t.equal(await quota.settleMany([{ requestId: 'q', userId: 1, tokenId: 1, actual: 120, itemId: 7, itemActual: 120 }]).then((d) => d[0]), 180)
  t.equal(await quota.balance('entitlement', 7, 1), 880, 'the item gets its difference back')
  t.equal(await quota.balance('user', 1), 1000, 'the wallet is untouched')
  t.equal(await quota.balance('token', 1, 1), 100_000 - 120)
  t.same(await quota.settleMany([{ requestId: 'q', userId: 1, tokenId: 1, actual: 120, itemId: 7, itemActual: 120 }]), [undefined], 'once only')

  await quota.reserve(req({ requestId: 'n1', amount: 300, entitlement: charge({ itemId: 8, cost: 1, load: async () => 2 }) }))
  await quota.reserve(req({ requestId: 'n2', amount: 300, entitlement: charge({ itemId: 8, cost: 1, load: async () => 2 }) }))
  t.equal(await quota.balance('entitlement', 8, 1), 0, 'two requests take the two left')
  t.match(await quota.reserve(req({ amount: 300, entitlement: charge({ itemId: 8, cost: 1, order: 'entitlement_only' }) })), { ok: false, reason: 'entitlement_quota' })
  // One answered (counts), one failed (gives its request back).
  await quota.settleMany([
    { requestId: 'n1', userId: 1, tokenId: 1, actual: 250, itemId: 8, itemActual: 1 },
    { requestId: 'n2', userId: 1, tokenId: 1, actual: 0, itemId: 8, itemActual: 0 }
  ])
  t.equal(await quota.balance('entitlement', 8, 1), 1)
  t.equal(await quota.balance('user', 1), 1000)
})

t.test('one script run holds reservations of every shape (plain, limited, entitled, both), each read from its own keys and arguments', async (t) => {
  const { quota, redis } = await store(t)
  // Every balance cached first, so the four go out together in one run.
  for (const u of [1, 2, 3, 4]) await quota.setBalance('user', u, 1000)
  for (const tk of [11, 12, 13, 14]) await quota.setBalance('token', tk, 1000, tk - 10)
  await quota.setBalance('entitlement', 30, 500, 3)
  await quota.setBalance('entitlement', 40, 500, 4)
  const limits = { userConcurrency: 2, tokenConcurrency: 0, tokenRpm: 5, tokenTpm: 0, tokens: 10 }
  const scripts: string[] = []
  const r = redis as Redis & { sendCommand: (cmd: { name: string }) => unknown }
  const send = r.sendCommand.bind(r)
  r.sendCommand = (cmd) => { if (cmd.name === 'evalsha' || cmd.name === 'eval') scripts.push(cmd.name); return send(cmd) }
  const [plain, limited, entitled, both] = await Promise.all([
    quota.reserve(req({ requestId: 's-plain', userId: 1, tokenId: 11, amount: 100 })),
    quota.reserve(req({ requestId: 's-limited', userId: 2, tokenId: 12, amount: 200, limits })),
    quota.reserve(req({ requestId: 's-entitled', userId: 3, tokenId: 13, amount: 300, entitlement: charge({ itemId: 30, cost: 300 }) })),
    quota.reserve(req({ requestId: 's-both', userId: 4, tokenId: 14, amount: 400, limits, entitlement: charge({ itemId: 40, cost: 1, order: 'entitlement_only' }) }))
  ])
  r.sendCommand = send
  t.equal(scripts.length, 1, 'one script run')
  t.match(plain, { ok: true, userBalance: 900, tokenBalance: 900 })
  t.equal((plain as { lease?: unknown }).lease, undefined, 'no limits, no lease')
  t.match(limited, { ok: true, userBalance: 800, tokenBalance: 800, lease: { requestId: 's-limited', leased: true, tokens: 10 } })
  t.ok(((limited as { lease: { minute: number } }).lease.minute) > 0, 'counted in this minute')
  t.match(entitled, { ok: true, paidBy: 30, userBalance: 1000, tokenBalance: 700 })
  t.match(both, { ok: true, paidBy: 40, userBalance: 1000, tokenBalance: 600, lease: { requestId: 's-both' } })
  t.equal(await quota.balance('user', 2), 800)
  t.equal(await quota.balance('entitlement', 30, 3), 200)
  t.equal(await quota.balance('entitlement', 40, 4), 499, 'a request-counted item takes its cost of 1')
  t.equal(await redis.zcard(leaseKey(2)), 1, 'the limited one holds a lease')
  t.equal(await redis.zcard(leaseKey(4)), 1)
  t.equal(await redis.zcard(leaseKey(1)), 0, 'the plain one none')
  t.equal(await redis.hget(rateKey(2, 12), 'c'), '1', 'and counts in its token\'s minute')
  t.same((await quota.openReservations()).map((o) => [o.requestId, o.amount, o.itemId ?? 0, o.itemAmount ?? 0]).sort(),
    [['s-both', 400, 40, 1], ['s-entitled', 300, 30, 300], ['s-limited', 200, 0, 0], ['s-plain', 100, 0, 0]])
  const deltas = await quota.settleMany([
    { requestId: 's-plain', userId: 1, tokenId: 11, actual: 40 },
    { requestId: 's-entitled', userId: 3, tokenId: 13, actual: 100, itemId: 30, itemActual: 100 },
    { requestId: 's-both', userId: 4, tokenId: 14, actual: 150, itemId: 40, itemActual: 1 }
  ])
  t.same(deltas, [60, 200, 250])
  t.equal(await quota.balance('user', 1), 960)
  t.equal(await quota.balance('entitlement', 30, 3), 400)
  t.equal(await quota.balance('entitlement', 40, 4), 499, 'the item paid what it held')
  t.equal(await quota.balance('token', 14, 4), 850, 'the token gets its difference whatever paid')
})
