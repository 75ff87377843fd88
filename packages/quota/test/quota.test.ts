import { createTestRedis } from '@modelgate/testing'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { type AdmissionLimits, QuotaStore, type ReserveRequest } from '../src/index.js'

async function store (t: Test, prefix?: string, opts: { leaseMs?: number } = {}) {
  const r = prefix === undefined ? await createTestRedis(t) : undefined
  const keyPrefix = prefix ?? r!.keyPrefix
  const redis = new Redis(r?.url ?? 'redis://127.0.0.1:6379', { keyPrefix })
  const quota = new QuotaStore(redis, opts)
  t.teardown(() => { quota.stopRenewing(); redis.disconnect() })
  return { quota, keyPrefix, redis }
}

const req = (over: Partial<ReserveRequest> = {}): ReserveRequest => ({
  requestId: `r-${Math.random()}`, userId: 1, tokenId: 1, unlimited: false, amount: 100, ttlSeconds: 3600,
  loadUser: async () => 1000, loadToken: async () => 1000, ...over
})

t.test('50 concurrent requests on a balance that covers one are admitted once, across gateways', async (t) => {
  const a = await store(t)
  const { quota: b } = await store(t, a.keyPrefix)
  let loads = 0
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a.quota : b).reserve(req({
    amount: 700, loadUser: async () => { loads++; return 1000 }, loadToken: async () => 5000
  }))))
  t.equal(results.filter((r) => r.ok).length, 1, 'exactly one admitted')
  t.ok(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'user_quota'))
  t.equal(await a.quota.balance('user', 1), 300)
  t.equal(await a.quota.balance('token', 1, 1), 4300)
  t.ok(loads >= 1, 'the balance was loaded from the system of record on the first miss')
})

t.test('the token balance limits too, and an unlimited token draws on the user only', async (t) => {
  const { quota } = await store(t)
  const refused = await quota.reserve(req({ amount: 200, loadUser: async () => 1000, loadToken: async () => 150 }))
  t.match(refused, { ok: false, reason: 'token_quota' })
  t.equal(await quota.balance('user', 1), 1000, 'a refusal takes nothing')
  const unlimited = await quota.reserve(req({ amount: 200, unlimited: true, tokenId: 2, loadToken: async () => { throw new Error('not read') } }))
  t.ok(unlimited.ok)
  t.equal(await quota.balance('user', 1), 800)
  t.equal(await quota.balance('token', 2, 1), undefined)
})

t.test('settlement returns the difference exactly once', async (t) => {
  const { quota } = await store(t)
  await quota.reserve(req({ requestId: 'abc', amount: 300 }))
  t.equal(await quota.balance('user', 1), 700)
  t.equal(await quota.settle('abc', 1, 1, 120), 180)
  t.equal(await quota.balance('user', 1), 880)
  t.equal(await quota.balance('token', 1, 1), 880)
  t.equal(await quota.settle('abc', 1, 1, 120), undefined, 'a redelivered settlement changes nothing')
  t.equal(await quota.balance('user', 1), 880)
  await quota.reserve(req({ requestId: 'more', amount: 100 }))
  t.equal(await quota.settle('more', 1, 1, 250), -150, 'an estimate that was too low takes the shortfall')
  t.equal(await quota.balance('user', 1), 630)
  t.match(await quota.reserve(req({ requestId: 'more' })), { ok: true }, 'once settled, the id holds no reservation')
})

t.test('a batch settles many reservations in one call, each exactly once', async (t) => {
  const { quota } = await store(t)
  await quota.reserve(req({ requestId: 'b1', amount: 300 }))
  await quota.reserve(req({ requestId: 'b2', amount: 100, unlimited: true, tokenId: 2 }))
  await quota.reserve(req({ requestId: 'b3', amount: 50, userId: 2, tokenId: 3 }))
  t.equal(await quota.balance('user', 1), 600)
  t.same(await quota.settleMany([
    { requestId: 'b1', userId: 1, tokenId: 1, actual: 120 },
    { requestId: 'gone', userId: 1, tokenId: 1, actual: 999 },
    { requestId: 'b2', userId: 1, tokenId: 2, actual: 130 },
    { requestId: 'b3', userId: 2, tokenId: 3, actual: 50 }
  ]), [180, undefined, -30, 0])
  t.equal(await quota.balance('user', 1), 750, '1000 - 120 - 130')
  t.equal(await quota.balance('token', 1, 1), 880)
  t.equal(await quota.balance('token', 2, 1), undefined, 'an unlimited token has no balance to correct')
  t.equal(await quota.balance('user', 2), 950)
  t.same(await quota.settleMany([{ requestId: 'b1', userId: 1, tokenId: 1, actual: 120 }, { requestId: 'b2', userId: 1, tokenId: 2, actual: 130 }]), [undefined, undefined], 'redelivered: nothing twice')
  t.equal(await quota.balance('user', 1), 750)
  t.same(await quota.settleMany([]), [])
})

t.test('reservations asked for in one tick go to Redis as one script run, each all-or-nothing', async (t) => {
  const { quota } = await store(t)
  const redis = quota.redis as Redis & { sendCommand: (cmd: { name: string }) => unknown }
  const send = redis.sendCommand.bind(redis)
  const scripts: string[] = []
  redis.sendCommand = (cmd) => {
    if (cmd.name === 'evalsha' || cmd.name === 'eval') scripts.push(cmd.name)
    return send(cmd)
  }
  // User 1 holds 1000 (loaded on the first miss), user 2 holds 250; token 7 only 30.
  const load = (n: number) => async () => n
  const asks = [
    ...Array.from({ length: 12 }, (_, i) => req({ requestId: `u1-${i}`, amount: 100, loadUser: load(1000) })),
    ...Array.from({ length: 4 }, (_, i) => req({ requestId: `u2-${i}`, userId: 2, tokenId: 2, amount: 100, loadUser: load(250) })),
    req({ requestId: 'tok7', userId: 2, tokenId: 7, amount: 40, loadUser: load(250), loadToken: load(30) })
  ]
  const outcomes = await Promise.all(asks.map(async (a) => await quota.reserve(a)))
  t.equal(outcomes.filter((o, i) => o.ok && i < 12).length, 10, 'user 1: ten of twelve 100-unit reservations fit in 1000')
  t.equal(outcomes.filter((o, i) => o.ok && i >= 12 && i < 16).length, 2, 'user 2: two of four fit in 250')
  t.match(outcomes[16], { ok: false, reason: 'token_quota' }, 'a token too small refuses without touching the user')
  t.equal(await quota.balance('user', 1), 0)
  t.equal(await quota.balance('user', 2), 50)
  t.equal(await quota.balance('token', 7, 2), 30)
  t.ok(scripts.length < asks.length, `misses retry per round, not per reservation (${scripts.length} runs for ${asks.length} reservations)`)

  // Every balance is cached now, so a tick's reservations make exactly one run.
  await quota.adjust('user', 1, 500)
  await quota.adjust('token', 1, 500, 1)
  scripts.length = 0
  const cached = await Promise.all([
    ...Array.from({ length: 8 }, async (_, i) => await quota.reserve(req({ requestId: `c-${i}`, amount: 100 }))),
    quota.reserve(req({ requestId: 'c-0', amount: 1 }))
  ])
  t.same(cached.map((o) => o.ok), [true, true, true, true, true, false, false, false, false], 'in order: five of eight fit in the 500 added')
  t.match(cached[8], { ok: false }, 'a request id reserved earlier in the same run is refused (here the spent balance says so first)')
  t.equal(scripts.length, 1, 'nine reservations of one tick, one script run')
  t.equal(await quota.balance('user', 1), 0)
})

t.test('a reused request id is refused while its reservation is open', async (t) => {
  const { quota } = await store(t)
  t.ok((await quota.reserve(req({ requestId: 'same' }))).ok)
  t.match(await quota.reserve(req({ requestId: 'same' })), { ok: false, reason: 'duplicate' })
  t.equal(await quota.balance('user', 1), 900)
  t.equal(await quota.balance('token', 1, 1), 900, 'the duplicate took nothing from either balance')
  // In one script run too: the second reservation of an id is refused, the first stands.
  const [a, b] = await Promise.all([quota.reserve(req({ requestId: 'twice' })), quota.reserve(req({ requestId: 'twice' }))])
  t.ok(a.ok)
  t.match(b, { ok: false, reason: 'duplicate' })
  t.equal(await quota.balance('user', 1), 800)
  t.equal(await quota.balance('token', 1, 1), 800)
  t.equal(await quota.settle('twice', 1, 1, 40), 60, 'settled once')
  t.equal(await quota.settle('twice', 1, 1, 40), undefined, 'and only once')
  t.equal(await quota.balance('user', 1), 860)
})

t.test('adjust applies Postgres-side changes only to cached balances', async (t) => {
  const { quota } = await store(t)
  await quota.adjust('user', 9, 500)
  t.equal(await quota.balance('user', 9), undefined, 'nothing cached, nothing invented')
  await quota.setBalance('user', 9, 100)
  await quota.adjust('user', 9, 500)
  t.equal(await quota.balance('user', 9), 600)
  await quota.forget('user', 9)
  t.equal(await quota.balance('user', 9), undefined)
})

t.test('a zero balance admits nothing, even a free request', async (t) => {
  const { quota } = await store(t)
  t.match(await quota.reserve(req({ amount: 0, loadUser: async () => 0 })), { ok: false, reason: 'user_quota' })
})

const limits = (over: Partial<AdmissionLimits>): AdmissionLimits => ({ userConcurrency: 0, tokenConcurrency: 0, tokenRpm: 0, tokenTpm: 0, tokens: 0, ...over })

/** Polls `check` until it holds or `ms` pass. */
async function until (check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return check()
}

t.test('concurrency limits hold across stores, in one script run, and come back on release', async (t) => {
  const a = await store(t)
  const { quota: b } = await store(t, a.keyPrefix)
  const asks = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a.quota : b).reserve(req({ requestId: `c${i}`, amount: 1, limits: limits({ userConcurrency: 3 }) })))
  const results = await Promise.all(asks)
  const admitted = results.filter((r) => r.ok)
  t.equal(admitted.length, 3, 'three in flight at most for the user')
  t.ok(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'user_concurrency' && 'retryAfterS' in r))
  t.equal(await a.quota.balance('user', 1), 997, 'refused requests took no quota')
  const first = admitted[0]!
  if (!first.ok || first.lease === undefined) throw new Error('no lease')
  a.quota.release(first.lease, 0)
  t.ok(await until(async () => (await a.quota.reserve(req({ amount: 1, limits: limits({ userConcurrency: 3 }) }))).ok), 'a released lease admits the next request')

  const tok = await Promise.all(Array.from({ length: 6 }, () => a.quota.reserve(req({ userId: 5, tokenId: 7, amount: 1, limits: limits({ tokenConcurrency: 2 }) }))))
  t.equal(tok.filter((r) => r.ok).length, 2)
  t.ok(tok.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'token_concurrency'))
})

t.test('the leases of a store that stops renewing lapse; live ones are renewed past their time', async (t) => {
  const a = await store(t, undefined, { leaseMs: 600 })
  const { quota: b } = await store(t, a.keyPrefix, { leaseMs: 600 })
  const live = await a.quota.reserve(req({ requestId: 'live', amount: 1, limits: limits({ userConcurrency: 2 }) }))
  const dead = await b.reserve(req({ requestId: 'dead', amount: 1, limits: limits({ userConcurrency: 2 }) }))
  t.ok(live.ok && dead.ok)
  t.match(await a.quota.reserve(req({ amount: 1, limits: limits({ userConcurrency: 2 }) })), { ok: false, reason: 'user_concurrency' })
  b.stopRenewing() // as a gateway that died: its lease is never released nor renewed
  const startedAt = Date.now()
  t.ok(await until(async () => (await a.quota.reserve(req({ requestId: 'next', amount: 1, limits: limits({ userConcurrency: 2 }) }))).ok), 'the dead lease lapsed')
  t.ok(Date.now() - startedAt < 5000)
  await new Promise((resolve) => setTimeout(resolve, 1500))
  t.match(await a.quota.reserve(req({ amount: 1, limits: limits({ userConcurrency: 2 }) })), { ok: false, reason: 'user_concurrency' },
    'the live leases, renewed, still count after more than twice their time')
})

t.test('requests per minute: a sliding window across stores, refused with a wait', async (t) => {
  const a = await store(t)
  const { quota: b } = await store(t, a.keyPrefix)
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a.quota : b).reserve(req({ amount: 1, limits: limits({ tokenRpm: 5 }) }))))
  t.equal(results.filter((r) => r.ok).length, 5)
  const refused = results.find((r) => !r.ok)
  t.match(refused, { ok: false, reason: 'token_rpm' })
  if (refused !== undefined && !refused.ok && 'retryAfterS' in refused) t.ok(refused.retryAfterS >= 1 && refused.retryAfterS <= 120, `retry after ${refused.retryAfterS} s`)
  t.equal(await a.quota.balance('token', 1, 1), 995)
  t.ok((await a.quota.reserve(req({ tokenId: 2, amount: 1, limits: limits({ tokenRpm: 5 }) }))).ok, 'another token has its own window')
})

t.test('tokens per minute: counted at admission, corrected at release', async (t) => {
  const { quota } = await store(t)
  const l = limits({ tokenTpm: 1000, tokens: 600 })
  const first = await quota.reserve(req({ amount: 1, limits: l }))
  t.ok(first.ok, 'an empty window admits')
  t.match(await quota.reserve(req({ amount: 1, limits: l })), { ok: false, reason: 'token_tpm' }, '600 + 600 > 1000')
  if (!first.ok || first.lease === undefined) throw new Error('no lease')
  quota.release(first.lease, 100) // it used 100 tokens, not 600
  t.ok(await until(async () => (await quota.reserve(req({ amount: 1, limits: l }))).ok), '100 + 600 fits once corrected')
  t.match(await quota.reserve(req({ amount: 1, limits: limits({ tokenTpm: 1000, tokens: 400 }) })), { ok: false, reason: 'token_tpm' }, '700 + 400 > 1000')
})
