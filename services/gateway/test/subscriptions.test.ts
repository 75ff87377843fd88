import { activateSubscription, type Database, type Kysely } from '@modelgate/db'
import { QuotaStore } from '@modelgate/quota'
import t, { type Test } from 'tap'
import { buildGateway, fakeOpenAI, reload, secondGateway, seedChannel, seedToken, seedUser, setOptions, settle, usageEvents } from './fixtures.js'

/*
 * Requests paid by a subscription's entitlement items instead of the wallet, by the user's
 * billing preference, through the same atomic reservation and exactly-once settlement.
 */

type Answer = { status: number, text: string, message?: string }

async function post (base: string, key: string, body: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, text, ...(res.status === 200 ? {} : { message: (JSON.parse(text) as { error: { message: string } }).error.message }) }
}

/** A plan with `items`, bound to `userId` for one period from now; its subscription and items. */
async function subscribe (db: Kysely<Database>, userId: number, items: Array<{ model: string, type: 0 | 1, total: number }>, title = 'Pro') {
  const plan = await db.insertInto('subscription_plans').values({ title, price_minor: 999, duration_unit: 'month' }).returningAll().executeTakeFirstOrThrow()
  await db.insertInto('subscription_plan_items').values(items.map((i) => ({ plan_id: plan.id, model_name: i.model, quota_type: i.type, amount_total: i.total }))).execute()
  return await db.transaction().execute(async (trx) => await activateSubscription(trx, { userId, planId: plan.id, source: 'admin' }))
}

const wallet = async (db: Kysely<Database>, id: number) => (await db.selectFrom('users').select(['quota', 'used_quota']).where('id', '=', id).executeTakeFirstOrThrow())
const used = async (db: Kysely<Database>, itemId: number) => (await db.selectFrom('user_subscription_items').select('amount_used').where('id', '=', itemId).executeTakeFirstOrThrow()).amount_used

/** Per-call models (1000 quota a call: $0.002 at QuotaPerUnit 500,000) and a token-priced one, on one fake OpenAI channel. */
async function setup (t: Test, behaviour: Parameters<typeof fakeOpenAI>[1] = {}) {
  const { app, url, env } = await buildGateway(t)
  const upstream = await fakeOpenAI(t, behaviour)
  await setOptions(app.db, { ModelPrice: { 'sub-call': 0.002, 'other-call': 0.002 }, ModelRatio: { 'sub-stream': 1 }, PreConsumedQuota: '0' })
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['sub-call', 'other-call', 'sub-stream'] })
  await reload(app)
  return { app, url, env, upstream }
}

const body = (model = 'sub-call') => ({ model, messages: [{ role: 'user', content: 'hi' }] })

async function preference (db: Kysely<Database>, userId: number, p: 'subscription_first' | 'wallet_first' | 'subscription_only' | 'wallet_only') {
  await db.updateTable('users').set({ billing_preference: p }).where('id', '=', userId).execute()
}

t.test('subscription first: the item pays while it covers the call, then the wallet; settlement charges each exactly once and the log says which paid', async (t) => {
  const { app, url } = await setup(t)
  const user = await seedUser(app.db, { quota: 10_000 })
  const token = await seedToken(app.db, user.id, { remain: 100_000 })
  const sub = await subscribe(app.db, user.id, [{ model: 'sub-call', type: 0, total: 2500 }])
  const item = sub.items[0]!

  for (let i = 0; i < 3; i++) t.equal((await post(url, token.key, body())).status, 200)
  t.equal((await post(url, token.key, body('other-call'))).status, 200, 'a model the plan does not include')
  const events = await usageEvents(app)
  const byItem = events.filter((e) => e.paid_by !== undefined)
  t.equal(byItem.length, 2, 'two calls fit the item')
  t.ok(byItem.every((e) => e.model_name === 'sub-call'), 'the third call and the other model go to the wallet')
  t.same(byItem[0]!.paid_by, { item_id: item.id, subscription_id: sub.subscription.id, plan_title: 'Pro', quota_type: 0 })
  await settle(app, events)
  await settle(app, events)
  t.equal(await used(app.db, item.id), 2000, 'the item is charged for its two calls, once')
  t.same(await wallet(app.db, user.id), { quota: 8000, used_quota: 4000 }, 'the wallet pays the other two; used quota counts all four')
  t.equal((await app.db.selectFrom('tokens').select('remain_quota').where('id', '=', token.row.id).executeTakeFirstOrThrow()).remain_quota, 96_000, 'the key\'s cap counts every call')
  const store = new QuotaStore(app.redis)
  t.equal(await store.balance('entitlement', item.id, user.id), 500, 'the cached item balance is the Postgres one')
  t.equal(await store.balance('user', user.id), 8000)
  const logs = await app.db.selectFrom('logs').select(['quota', 'other']).where('user_id', '=', user.id).orderBy('id').execute()
  t.same(logs.map((l) => (l.other as { billing_source: string }).billing_source).sort(), ['subscription', 'subscription', 'wallet', 'wallet'])
  t.match(logs.find((l) => (l.other as { billing_source: string }).billing_source === 'subscription')!.other, { billing_source: 'subscription', subscription_id: sub.subscription.id, subscription_item_id: item.id, plan_title: 'Pro' })
  t.same(logs.map((l) => l.quota), [1000, 1000, 1000, 1000], 'each row shows the call\'s cost')
})

t.test('subscription only: 50 concurrent calls over two gateways on an item with room for five admit five; the rest are told why and nothing else moves', async (t) => {
  const { app, url, env, upstream } = await setup(t, { delayMs: 100 })
  const other = await secondGateway(t, env)
  const user = await seedUser(app.db, { quota: 1_000_000 })
  const token = await seedToken(app.db, user.id)
  await preference(app.db, user.id, 'subscription_only')
  const sub = await subscribe(app.db, user.id, [{ model: 'sub-call', type: 0, total: 5000 }])
  const results = await Promise.all(Array.from({ length: 50 }, async (_, i) => await post(i % 2 === 0 ? url : other.url, token.key, body())))
  t.equal(results.filter((r) => r.status === 200).length, 5, 'only what fits')
  const refused = results.filter((r) => r.status !== 200)
  t.ok(refused.every((r) => r.status === 403 && r.message === 'No active subscription covers model sub-call, or its allowance is used up (your billing preference uses subscriptions only)'), refused[0]?.message ?? '')
  t.equal(upstream.requests.length, 5, 'refused calls reach no upstream')
  await other.app.usagePublisher.drain()
  const events = await usageEvents(app)
  t.equal(events.length, 5)
  await settle(app, events)
  t.equal(await used(app.db, sub.items[0]!.id), 5000)
  t.equal((await wallet(app.db, user.id)).quota, 1_000_000, 'the wallet is untouched')
  t.equal((await post(url, token.key, body('other-call'))).status, 403, 'a model without an item is refused under subscription only')
})

t.test('an item counted in requests takes one per answered call; a failed call costs it nothing', async (t) => {
  const { app, url, upstream } = await setup(t)
  const user = await seedUser(app.db, { quota: 0 })
  const token = await seedToken(app.db, user.id)
  const sub = await subscribe(app.db, user.id, [{ model: 'sub-call', type: 1, total: 3 }])
  const item = sub.items[0]!
  upstream.behaviour.failWith = { status: 500 }
  t.equal((await post(url, token.key, body())).status, 500)
  upstream.behaviour.failWith = undefined
  // The worker settles the failed call: its request goes back to the item.
  await settle(app, await usageEvents(app))
  for (let i = 0; i < 3; i++) t.equal((await post(url, token.key, body())).status, 200, `call ${i + 1}`)
  const fourth = await post(url, token.key, body())
  t.equal(fourth.status, 403, 'the three requests are used and the wallet is empty')
  t.equal(fourth.message, 'Insufficient user quota')
  await settle(app, await usageEvents(app))
  t.equal(await used(app.db, item.id), 3, 'three answered calls, the failed one not counted')
  t.same(await wallet(app.db, user.id), { quota: 0, used_quota: 3000 })
  const logs = await app.db.selectFrom('logs').select('other').where('user_id', '=', user.id).where('type', '=', 2).execute()
  t.ok(logs.length === 3 && logs.every((l) => (l.other as { subscription_requests?: number }).subscription_requests === 1))
})

t.test('wallet first uses the item once the wallet is short; wallet only never does', async (t) => {
  const { app, url } = await setup(t)
  const user = await seedUser(app.db, { quota: 1500 })
  const token = await seedToken(app.db, user.id)
  const sub = await subscribe(app.db, user.id, [{ model: 'sub-call', type: 0, total: 10_000 }])
  await preference(app.db, user.id, 'wallet_first')
  for (let i = 0; i < 2; i++) t.equal((await post(url, token.key, body())).status, 200)
  let events = await usageEvents(app)
  t.same(events.map((e) => e.paid_by === undefined ? 'wallet' : 'item').sort(), ['item', 'wallet'], 'the first on the wallet (1500 covers one call), the second on the item')
  await settle(app, events)
  await preference(app.db, user.id, 'wallet_only')
  // A key not seen before is loaded with the preference as it now is.
  const fresh = await seedToken(app.db, user.id)
  t.equal((await post(url, fresh.key, body())).status, 403, 'wallet only: the 500 left do not cover a call, the item is not used')
  events = await usageEvents(app)
  t.equal(events.length, 2)
  t.equal(await used(app.db, sub.items[0]!.id), 1000)
})

t.test('a stream admitted on an item settles against it even when the subscription ends mid-stream; the next call goes to the wallet', async (t) => {
  const { app, url, upstream } = await setup(t, { chunks: 6, chunkDelayMs: 150 })
  const user = await seedUser(app.db, { quota: 1_000_000 })
  const token = await seedToken(app.db, user.id)
  const sub = await subscribe(app.db, user.id, [{ model: 'sub-stream', type: 0, total: 1_000_000 }])
  const item = sub.items[0]!
  const streaming = post(url, token.key, { ...body('sub-stream'), stream: true })
  const deadline = Date.now() + 10_000
  while (upstream.requests.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  // The subscription ends while the answer streams (as the worker's expiry does: ended, cache dropped).
  await app.db.updateTable('user_subscriptions').set({ status: 'expired' }).where('id', '=', sub.subscription.id).execute()
  await new QuotaStore(app.redis).forget('entitlement', item.id, user.id)
  const answer = await streaming
  t.equal(answer.status, 200)
  t.match(answer.text, /\[DONE\]/)
  t.equal((await post(url, token.key, body('sub-stream'))).status, 200, 'the next call is admitted')
  const events = await usageEvents(app)
  t.equal(events.length, 2)
  const stream = events.find((e) => e.is_stream)!
  const later = events.find((e) => !e.is_stream)!
  t.equal(stream.paid_by?.item_id, item.id, 'the stream was admitted on the item')
  t.equal(later.paid_by, undefined, 'the next call on the wallet: the ended item has nothing left')
  await settle(app, events)
  t.ok(stream.quota > 0)
  t.equal(await used(app.db, item.id), stream.quota, 'the stream is charged to the item that admitted it')
  t.equal((await wallet(app.db, user.id)).quota, 1_000_000 - later.quota, 'the wallet pays only the later call')
})

