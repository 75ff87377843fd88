import type { UsageEvent } from '@modelgate/contracts'
import { type Database, type Kysely, redisSettlement, settleUsage, settleUsageBatch } from '@modelgate/db'
import { QuotaStore } from '@modelgate/quota'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { buildGateway, fakeOpenAI, reload, secondGateway, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

type Answer = { status: number, body: { error?: { message: string, code: string | null } } }

async function post (base: string, key: string, body: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  const text = await res.text()
  // A stream answers SSE; only refusals are read as JSON.
  return { status: res.status, body: res.status === 200 ? {} : JSON.parse(text) as Answer['body'] }
}

/**
 * Settles `events` as the billing worker does: Postgres first (idempotent by request id), then
 * the Redis correction of each reservation.
 */
async function settle (db: Kysely<Database>, quota: QuotaStore, events: readonly UsageEvent[]): Promise<void> {
  await settleUsageBatch(db, events, { writeLog: true })
  await quota.settleMany(events.map(redisSettlement))
}

/** Every event of the gateways (each publishes from its own buffer onto the one queue). */
async function allEvents (app: FastifyInstance, others: FastifyInstance[]): Promise<UsageEvent[]> {
  for (const o of others) await o.usagePublisher.drain()
  return await usageEvents(app)
}

const pgToken = async (db: Kysely<Database>, id: number) => (await db.selectFrom('tokens').select('remain_quota').where('id', '=', id).executeTakeFirstOrThrow()).remain_quota
const pgUser = async (db: Kysely<Database>, id: number) => (await db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota

t.test('SEC-14 token quota covers one request: 50 concurrent per-call requests over 3 replicas admit one; the same with an unlimited token and user quota = P', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const replicas = [await secondGateway(t, env), await secondGateway(t, env)]
  const urls = [url, ...replicas.map((r) => r.url)]
  const upstream = await fakeOpenAI(t, { delayMs: 200 })
  // Per-call price: $0.002 x QuotaPerUnit 500000 = 1000 quota a call.
  const P = 1000
  await app.db.insertInto('options').values({ key: 'ModelPrice', value: JSON.stringify({ 'sec-per-call': 0.002 }) }).execute()
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['sec-per-call'] })
  for (const a of [app, ...replicas.map((r) => r.app)]) await reload(a)
  const quota = new QuotaStore(app.redis)
  const body = { model: 'sec-per-call', messages: [{ role: 'user', content: 'hi' }] }

  const user = await seedUser(app.db, { quota: 1000 * P })
  const token = await seedToken(app.db, user.id, { remain: P })
  const results = await Promise.all(Array.from({ length: 50 }, async (_, i) => await post(urls[i % 3]!, token.key, body)))
  t.equal(results.filter((r) => r.status === 200).length, 1, 'exactly one admitted')
  t.ok(results.filter((r) => r.status !== 200).every((r) => r.status === 403 && r.body.error?.message === 'Insufficient API key quota' && r.body.error.code === 'insufficient_quota'),
    'the others get the quota-exhausted error')
  t.equal(upstream.requests.length, 1, 'refused requests made no upstream call')
  const events = await allEvents(app, replicas.map((r) => r.app))
  t.equal(events.length, 1)
  t.match(events[0], { reserved: P, quota: P, outcome: 'success' })
  t.ok(await quota.balance('token', token.row.id, token.row.user_id) === 0, 'the cached token balance is spent, not negative')
  await settle(app.db, quota, events)
  t.equal(await pgToken(app.db, token.row.id), 0, 'after settlement remain_quota = 0')
  t.equal(await quota.balance('token', token.row.id, token.row.user_id), 0, 'and never negative in Redis')
  t.equal(await pgUser(app.db, user.id), 999 * P)
  t.equal((await post(url, token.key, body)).status, 403, 'an exhausted token stays refused')

  // An unlimited token draws on the user only: user quota = P.
  const poor = await seedUser(app.db, { quota: P })
  const unlimited = await seedToken(app.db, poor.id, { unlimited: true, remain: 0 })
  const before = upstream.requests.length
  const again = await Promise.all(Array.from({ length: 50 }, async (_, i) => await post(urls[i % 3]!, unlimited.key, body)))
  t.equal(again.filter((r) => r.status === 200).length, 1, 'exactly one admitted on the user balance')
  t.ok(again.filter((r) => r.status !== 200).every((r) => r.status === 403 && r.body.error?.message === 'Insufficient user quota'), 'the others: user quota exhausted')
  t.equal(upstream.requests.length, before + 1)
  const second = (await allEvents(app, replicas.map((r) => r.app))).filter((e) => e.user_id === poor.id)
  t.equal(second.length, 1)
  await settle(app.db, quota, second)
  t.equal(await pgUser(app.db, poor.id), 0, 'the user balance ends at 0')
  t.equal(await quota.balance('user', poor.id), 0, 'never negative')
})

t.test('SEC-15 reservation and refund for token-priced streams: 3 maximum-cost reservations fit, each settles to its usage, nothing left held', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const other = await secondGateway(t, env)
  const upstream = await fakeOpenAI(t, { chunks: 3, chunkDelayMs: 300 })
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  await reload(other.app)
  const quota = new QuotaStore(app.redis)
  const body = { model: 'gpt-4o-mini', stream: true, max_tokens: 20_000, messages: [{ role: 'user', content: 'a short answer please' }] }
  const user = await seedUser(app.db)

  // One request's maximum-cost reservation, read off its event (prompt estimate + max_tokens).
  const probe = await seedToken(app.db, user.id)
  t.equal((await post(url, probe.key, body)).status, 200)
  const [first] = await usageEvents(app)
  const R = first!.reserved
  t.ok(R > 1000 * first!.quota, `the reservation (${R}) is far above the real cost (${first!.quota})`)
  await settle(app.db, quota, [first!])

  const Q = 3 * R + Math.floor(R / 2)
  const token = await seedToken(app.db, user.id, { remain: Q })
  const userBefore = await pgUser(app.db, user.id)
  const round = async () => await Promise.all(Array.from({ length: 10 }, async (_, i) => await post(i % 2 === 0 ? url : other.url, token.key, body)))
  const results = await round()
  t.equal(results.filter((r) => r.status === 200).length, 3, 'three admitted at once, no more')
  t.ok(results.filter((r) => r.status !== 200).every((r) => r.status === 403 && r.body.error?.message === 'Insufficient API key quota'))
  await other.app.usagePublisher.drain()
  const events = (await usageEvents(app)).filter((e) => e.token_id === token.row.id)
  t.equal(events.length, 3, 'one event per admitted request')
  t.ok(events.every((e) => e.reserved === R && e.usage_source === 'upstream' && e.prompt_tokens === 11 && e.completion_tokens === 6 && e.quota === first!.quota),
    'each billed on its real usage')
  t.ok(await quota.balance('token', token.row.id, token.row.user_id) === Q - 3 * R, 'until settlement the reservations are held')

  await settle(app.db, quota, events)
  const spent = events.reduce((a, e) => a + e.quota, 0)
  t.equal(await pgToken(app.db, token.row.id), Q - spent, 'final quota = Q - sum of the settled costs')
  t.equal(await quota.balance('token', token.row.id, token.row.user_id), Q - spent, 'the surplus is released in Redis too')
  t.equal(await pgUser(app.db, user.id), userBefore - spent)
  t.equal(await quota.balance('user', user.id), userBefore - spent)
  t.same(await quota.openReservations(), [], 'no reservation keys left in Redis')
  t.equal((await round()).filter((r) => r.status === 200).length, 3, 'the released surplus admits three again')
  await other.app.usagePublisher.drain()
  const later = (await usageEvents(app)).filter((e) => e.token_id === token.row.id && !events.some((s) => s.request_id === e.request_id))
  await settle(app.db, quota, later)
  const total = spent + later.reduce((a, e) => a + e.quota, 0)
  const settledIds = new Set([...events, ...later].map((e) => e.request_id))
  t.equal(await pgToken(app.db, token.row.id), Q - total)

  // Invariant 1: Redis agrees with Postgres, so dropping its balances and rebuilding them from
  // Postgres (what a flush and the reconciliation do) changes no balance.
  t.equal(await quota.balance('token', token.row.id, token.row.user_id), Q - total)
  await quota.forget('token', token.row.id, token.row.user_id)
  await quota.forget('user', user.id)
  t.equal((await post(url, token.key, body)).status, 200, 'admitted against the balance rebuilt from Postgres')
  t.equal(await quota.balance('token', token.row.id, token.row.user_id), Q - total - R, 'rebuilt from Postgres, less the new reservation')
  const last = (await usageEvents(app)).find((e) => e.token_id === token.row.id && !settledIds.has(e.request_id))!
  await settle(app.db, quota, [last])
  t.equal(await pgToken(app.db, token.row.id), Q - total - last.quota)
  t.equal(await quota.balance('token', token.row.id, token.row.user_id), Q - total - last.quota)
  t.same(await quota.openReservations(), [])
})

t.test('SEC-17 settlement is exactly once: a relayed request\'s event delivered 5 times changes counters, logs and hourly stats once', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db, { quota: 1_000_000 })
  const token = await seedToken(app.db, user.id, { remain: 500_000 })
  const channel = await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const quota = new QuotaStore(app.redis)
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }
  t.equal((await post(url, token.key, body)).status, 200)
  t.equal((await post(url, token.key, body)).status, 200)
  const [e, neighbour] = await usageEvents(app)
  const cost = e!.quota
  t.ok(cost > 0)

  const snapshot = async () => ({
    user: await app.db.selectFrom('users').select(['quota', 'used_quota', 'request_count']).where('id', '=', user.id).executeTakeFirstOrThrow(),
    token: await app.db.selectFrom('tokens').select(['remain_quota', 'used_quota']).where('id', '=', token.row.id).executeTakeFirstOrThrow(),
    channel: (await app.db.selectFrom('channels').select('used_quota').where('id', '=', channel.id).executeTakeFirstOrThrow()).used_quota,
    logs: (await app.db.selectFrom('logs').select('quota').where('request_id', '=', e!.request_id).execute()).length,
    hourly: await app.db.selectFrom('quota_data').select(['count', 'quota', 'token_used']).where('user_id', '=', user.id).execute(),
    redisUser: await quota.balance('user', user.id),
    redisToken: await quota.balance('token', token.row.id, token.row.user_id)
  })
  // 1: the first delivery; 2: the same job again (a crash after commit, before the ack);
  // 3: a stalled job taken by another worker (one event alone); 4: the event inside another
  // batch, with a new one; 5: twice within one batch.
  await settle(app.db, quota, [e!])
  const once = await snapshot()
  t.same(once.user, { quota: 1_000_000 - cost, used_quota: cost, request_count: 1 })
  t.same(once.token, { remain_quota: 500_000 - cost, used_quota: cost })
  t.equal(once.channel, cost)
  t.equal(once.logs, 1)
  t.match(once.hourly, [{ count: 1, quota: cost, token_used: e!.prompt_tokens + e!.completion_tokens }])
  await settle(app.db, quota, [e!])
  t.equal(await settleUsage(app.db, e!, { writeLog: true }), undefined, 'a single-event settlement finds it settled')
  t.same(await quota.settleMany([{ requestId: e!.request_id, userId: e!.user_id, tokenId: e!.token_id, actual: e!.quota }]), [undefined], 'no second Redis correction')
  await settle(app.db, quota, [e!, neighbour!])
  await settle(app.db, quota, [e!, e!])
  const after = await snapshot()
  const n = neighbour!.quota
  t.same(after.user, { quota: 1_000_000 - cost - n, used_quota: cost + n, request_count: 2 }, 'user counters changed once per request')
  t.same(after.token, { remain_quota: 500_000 - cost - n, used_quota: cost + n })
  t.equal(after.channel, cost + n)
  t.equal(after.logs, 1, 'one log row for the replayed request')
  t.match(after.hourly, [{ count: 2, quota: cost + n }], 'hourly stats moved by the new event only')
  t.equal(after.redisUser, after.user.quota, 'Redis agrees with Postgres')
  t.equal(after.redisToken, after.token.remain_quota)
})
