import { randomUUID } from 'node:crypto'
import { OptionValues, quotaPrice, type UsageEvent } from '@modelgate/contracts'
import { activateSubscription, type Database, type Kysely } from '@modelgate/db'
import t from 'tap'
import { run as reconcile } from '../src/jobs/reconcile-balances/handler.js'
import { SettlementBatcher } from '../src/jobs/settle-usage/batcher.js'
import { run as settle } from '../src/jobs/settle-usage/handler.js'
import { run as periods, type SubscriptionPeriodsResult } from '../src/jobs/subscriptions/handler.js'
import { settleSetup } from './fixtures.js'

/** A plan (price 9.99, one month) with `items`, and one period of it for `userId`. */
async function subscribe (db: Kysely<Database>, userId: number, items: Array<{ model: string, type: 0 | 1, total: number }>, opts: { autoRenew?: boolean, start?: number } = {}) {
  const plan = await db.insertInto('subscription_plans').values({ title: 'Pro', price_minor: 999, duration_unit: 'month' }).returningAll().executeTakeFirstOrThrow()
  await db.insertInto('subscription_plan_items').values(items.map((i) => ({ plan_id: plan.id, model_name: i.model, quota_type: i.type, amount_total: i.total }))).execute()
  const sub = await db.transaction().execute(async (trx) => await activateSubscription(trx, {
    userId, planId: plan.id, source: 'admin', ...(opts.autoRenew === undefined ? {} : { autoRenew: opts.autoRenew }), ...(opts.start === undefined ? {} : { startTime: opts.start })
  }))
  return { plan, ...sub }
}

function event (s: Awaited<ReturnType<typeof settleSetup>>, over: Partial<UsageEvent>): UsageEvent {
  return {
    request_id: randomUUID(), created_at: Math.floor(Date.now() / 1000), user_id: s.user.id, username: 'payer', token_id: s.token.id, token_name: 'tok', unlimited_token: false,
    channel_id: s.channel.id, model_name: 'sub-model', upstream_model: 'sub-model', group: 'default', is_stream: false, ip: '127.0.0.1',
    use_time_ms: 1200, first_response_ms: 300, prompt_tokens: 100, completion_tokens: 50, cached_tokens: 0,
    reserved: 1000, quota: 400, outcome: 'success', usage_source: 'upstream', price: { model_ratio: 1 }, retried_channels: [], ...over
  }
}

const item = async (db: Kysely<Database>, id: number) => (await db.selectFrom('user_subscription_items').select('amount_used').where('id', '=', id).executeTakeFirstOrThrow()).amount_used
const quotaOf = async (db: Kysely<Database>, id: number) => (await db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota

t.test('events paid by an item settle against it, once, batched or not; the wallet and its reminder are left alone', async (t) => {
  const s = await settleSetup(t, 'payer')
  const sub = await subscribe(s.db, s.user.id, [{ model: 'sub-model', type: 0, total: 10_000 }, { model: 'sub-req', type: 1, total: 5 }])
  const [quotaItem, requestItem] = sub.items
  const paidBy = (i: typeof quotaItem) => ({ item_id: i!.id, subscription_id: sub.subscription.id, plan_title: 'Pro', quota_type: i!.quota_type })
  const load = { loadUser: async () => s.user.quota, loadToken: async () => s.token.remain_quota }
  const reserve = async (requestId: string, i: typeof quotaItem, cost: number) => await s.quota.reserve({
    requestId, userId: s.user.id, tokenId: s.token.id, unlimited: false, amount: 1000, ttlSeconds: 60, ...load,
    entitlement: { itemId: i!.id, cost, order: 'entitlement_only', ttlSeconds: 3600, load: async () => i!.amount_total - i!.amount_used }
  })
  t.match(await reserve('q1', quotaItem, 1000), { ok: true, paidBy: quotaItem!.id })
  t.match(await reserve('r1', requestItem, 1), { ok: true, paidBy: requestItem!.id })
  t.match(await reserve('r2', requestItem, 1), { ok: true, paidBy: requestItem!.id })
  const reminded: string[] = []
  const options = async () => new OptionValues(new Map([['LogConsumeEnabled', 'true'], ['QuotaRemindThreshold', '2000000']]))
  const batcher = new SettlementBatcher(s.db, { max: 50, waitMs: 5 })
  const deps = { ...s.deps, options, remind: async (to: { username: string }) => { reminded.push(to.username) }, settle: async (e: Parameters<typeof batcher.settle>[0], w: boolean) => await batcher.settle(e, w) }
  const events = [
    event(s, { request_id: 'q1', quota: 400, paid_by: paidBy(quotaItem) }),
    event(s, { request_id: 'r1', quota: 700, paid_by: paidBy(requestItem) }),
    event(s, { request_id: 'r2', quota: 0, outcome: 'failed', paid_by: paidBy(requestItem) })
  ]
  t.same(await settle({ id: 'batch', data: { events } }, deps), { settled: 3, events: 3 })
  t.same(await settle({ id: 'batch', data: { events } }, s.deps), { settled: 0, events: 3 }, 'a redelivery (one by one this time) changes nothing')
  t.equal(await item(s.db, quotaItem!.id), 400)
  t.equal(await item(s.db, requestItem!.id), 1, 'one answered request; the failed one costs nothing')
  t.equal(await quotaOf(s.db, s.user.id), 1_000_000, 'the wallet is untouched')
  t.equal((await s.db.selectFrom('tokens').select('remain_quota').where('id', '=', s.token.id).executeTakeFirstOrThrow()).remain_quota, 500_000 - 1100, 'the key cap counts all')
  t.same(reminded, [], 'no low-balance mail: the wallet did not move')
  t.equal(await s.quota.balance('entitlement', quotaItem!.id, s.user.id), 10_000 - 400, 'the Redis item balance is corrected to the actual cost')
  t.equal(await s.quota.balance('entitlement', requestItem!.id, s.user.id), 4)
  t.equal(await s.quota.balance('user', s.user.id), 1_000_000)
})

t.test('reconciliation: an orphan paid by an item is billed to it; a drifted item balance is repaired; an ended subscription\'s item is worth nothing', async (t) => {
  const s = await settleSetup(t, 'payer')
  const sub = await subscribe(s.db, s.user.id, [{ model: 'sub-model', type: 0, total: 10_000 }])
  const it = sub.items[0]!
  const load = { loadUser: async () => s.user.quota, loadToken: async () => s.token.remain_quota }
  await s.quota.reserve({
    requestId: 'lost', userId: s.user.id, tokenId: s.token.id, unlimited: false, amount: 1500, ttlSeconds: 600, ...load,
    entitlement: { itemId: it.id, cost: 1500, order: 'entitlement_first', ttlSeconds: 3600, load: async () => 10_000 }
  })
  const result = await reconcile({ db: s.db, quota: s.quota, orphanAfterMs: 1000, now: () => Date.now() + 60_000 })
  t.equal(result.orphans, 1)
  t.equal(await item(s.db, it.id), 1500, 'billed to the item at its estimate')
  t.equal(await quotaOf(s.db, s.user.id), 1_000_000)
  const log = await s.db.selectFrom('logs').select('other').where('request_id', '=', 'lost').executeTakeFirstOrThrow()
  t.match(log.other, { billing_source: 'subscription', subscription_item_id: it.id, usage_source: 'estimated' })
  t.equal(await s.quota.balance('entitlement', it.id, s.user.id), 8500)

  await s.quota.setBalance('entitlement', it.id, 123, s.user.id)
  await reconcile({ db: s.db, quota: s.quota })
  t.equal(await s.quota.balance('entitlement', it.id, s.user.id), 8500, 'repaired from Postgres')
  await s.db.updateTable('user_subscriptions').set({ status: 'cancelled' }).where('id', '=', sub.subscription.id).execute()
  await reconcile({ db: s.db, quota: s.quota })
  t.equal(await s.quota.balance('entitlement', it.id, s.user.id), 0, 'a cancelled subscription\'s item is worth nothing')
})

t.test('periods end on schedule; a subscription set to renew starts its next period from the wallet once, whatever runs at once, and only when the balance covers it', async (t) => {
  const s = await settleSetup(t, 'payer')
  const price = quotaPrice(new OptionValues(new Map([['QuotaPerUnit', '500000']])), { price_minor: 999 })
  t.equal(price, 4_995_000, '9.99 at 500,000 quota a unit')
  await s.db.updateTable('users').set({ quota: 6_000_000 }).where('id', '=', s.user.id).execute()
  await s.quota.setBalance('user', s.user.id, 6_000_000)
  const now = Math.floor(Date.now() / 1000)
  const monthAgo = now - 31 * 86_400
  const plain = await subscribe(s.db, s.user.id, [{ model: 'sub-model', type: 0, total: 100 }], { start: monthAgo })
  const renewing = await subscribe(s.db, s.user.id, [{ model: 'sub-model', type: 0, total: 200 }], { start: monthAgo, autoRenew: true })
  const current = await subscribe(s.db, s.user.id, [{ model: 'sub-model', type: 0, total: 300 }])
  for (const i of [...plain.items, ...renewing.items, ...current.items]) await s.quota.setBalance('entitlement', i.id, 50, s.user.id)
  const announced: number[] = []
  const options = async () => new OptionValues(new Map([['QuotaPerUnit', '500000']]))
  const deps = { db: s.db, quota: s.quota, options, announce: async (id: number) => { announced.push(id) } }
  const runs = await Promise.all([periods(deps), periods(deps), periods(deps)])
  const sum = (rs: readonly SubscriptionPeriodsResult[]) => rs.reduce((a, r) => ({ expired: a.expired + r.expired, renewed: a.renewed + r.renewed }), { expired: 0, renewed: 0 })
  t.same(sum(runs), { expired: 2, renewed: 1 }, 'two periods ended, one renewed, once')
  const subs = await s.db.selectFrom('user_subscriptions').select(['id', 'status', 'source', 'renewed_from', 'start_time', 'auto_renew']).where('user_id', '=', s.user.id).orderBy('id').execute()
  t.same(subs.map((x) => x.status), ['expired', 'expired', 'active', 'active'])
  const next = subs[3]!
  t.same([next.source, next.renewed_from, next.auto_renew, next.start_time], ['renewal', renewing.subscription.id, true, renewing.subscription.end_time], 'the next period continues the last one and renews again')
  const fresh = await s.db.selectFrom('user_subscription_items').select(['amount_total', 'amount_used']).where('user_subscription_id', '=', next.id).execute()
  t.same(fresh, [{ amount_total: 200, amount_used: 0 }], 'with fresh items')
  t.equal(await quotaOf(s.db, s.user.id), 6_000_000 - price, 'paid from the wallet')
  t.equal(await s.quota.balance('user', s.user.id), 6_000_000 - price, 'and from its cached balance')
  const log = await s.db.selectFrom('logs').select(['quota', 'content']).where('user_id', '=', s.user.id).executeTakeFirstOrThrow()
  t.equal(log.quota, price)
  t.match(log.content, /^subscription renewed: plan Pro until .* UTC, paid from the balance$/)
  for (const i of [...plain.items, ...renewing.items]) t.equal(await s.quota.balance('entitlement', i.id, s.user.id), undefined, `ended item ${i.id} dropped from Redis`)
  t.equal(await s.quota.balance('entitlement', current.items[0]!.id, s.user.id), 50, 'a current item is left alone')
  t.same([...new Set(announced)], [s.user.id], 'the gateways are told')
  t.same(sum([await periods(deps)]), { expired: 0, renewed: 0 }, 'the next run finds nothing due')

  // A period a card paid for (a Stripe order) is renewed by Stripe, never from the wallet, whatever its flag says.
  const order = await s.db.insertInto('subscription_orders').values({ user_id: s.user.id, plan_id: renewing.plan.id, price_minor: 999, currency: 'USD', trade_no: 'SUBstripe', payment_method: 'stripe', status: 'success' }).returningAll().executeTakeFirstOrThrow()
  const card = await s.db.transaction().execute(async (trx) => await activateSubscription(trx, { userId: s.user.id, planId: renewing.plan.id, source: 'order', orderId: order.id, startTime: monthAgo, autoRenew: true }))
  t.same(sum([await periods(deps)]), { expired: 1, renewed: 0 }, 'the card-paid period ends without a wallet renewal')
  t.equal(await quotaOf(s.db, s.user.id), 6_000_000 - price)
  t.equal((await s.db.selectFrom('user_subscriptions').select('id').where('renewed_from', '=', card.subscription.id).execute()).length, 0)

  // The renewed period ends too; the balance (1,005,000) no longer covers the price: it just ends.
  await s.db.updateTable('user_subscriptions').set({ end_time: now - 1 }).where('id', '=', next.id).execute()
  t.same(sum([await periods(deps)]), { expired: 1, renewed: 0 })
  t.equal(await quotaOf(s.db, s.user.id), 6_000_000 - price, 'nothing taken')
  t.equal((await s.db.selectFrom('user_subscriptions').select('id').where('renewed_from', '=', next.id).execute()).length, 0)
})
