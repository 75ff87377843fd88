import { type Kysely, sql, type Transaction } from 'kysely'
import type { BillingPreference, DurationUnit, QuotaType } from '@modelgate/contracts'
import type {
  Database,
  SubscriptionOrder,
  SubscriptionPlan,
  SubscriptionPlanItem,
  User,
  UserSubscription,
  UserSubscriptionItem
} from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

const nowSeconds = (): number => Math.floor(Date.now() / 1000)

/** A plan with its entitlement items. */
export interface PlanWithItems {
  plan: SubscriptionPlan
  items: SubscriptionPlanItem[]
}

/** One period of a plan held by a user, with its items. */
export interface SubscriptionWithItems {
  subscription: UserSubscription
  items: UserSubscriptionItem[]
}

/** A plan's fields as stored (what an admin sets). */
export interface PlanFields {
  title: string
  subtitle: string
  price_minor: number
  currency: string
  duration_unit: DurationUnit
  duration_value: number
  custom_seconds: number
  enabled: boolean
  sort_order: number
  stripe_price_id: string
  creem_product_id: string
}

/** An entitlement item of a plan as an admin sets it. */
export interface PlanItemFields {
  model_name: string
  quota_type: QuotaType
  amount_total: number
}

/** `months` calendar months after `start` (unix seconds), in UTC; a day past the month's end is its last day (Jan 31 + 1 month = Feb 28/29). */
function addMonths (start: number, months: number): number {
  const d = new Date(start * 1000)
  const total = d.getUTCMonth() + months
  const year = d.getUTCFullYear() + Math.floor(total / 12)
  const month = ((total % 12) + 12) % 12
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  const ms = Date.UTC(year, month, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds())
  return Math.floor(ms / 1000)
}

/**
 * When one period of `plan` starting at `start` (unix seconds) ends: calendar months and years by
 * date arithmetic in UTC, a week 7 days, a day 86,400 seconds, an hour 3,600, custom `custom_seconds`.
 */
export function periodEnd (plan: Pick<SubscriptionPlan, 'duration_unit' | 'duration_value' | 'custom_seconds'>, start: number): number {
  const n = Math.max(1, Math.floor(plan.duration_value))
  switch (plan.duration_unit) {
    case 'year': return addMonths(start, 12 * n)
    case 'month': return addMonths(start, n)
    case 'week': return start + 7 * 86_400 * n
    case 'day': return start + 86_400 * n
    case 'hour': return start + 3_600 * n
    case 'custom': return start + Math.max(1, Math.floor(plan.custom_seconds))
  }
}

async function itemsOfPlans (db: Db, planIds: readonly number[]): Promise<Map<number, SubscriptionPlanItem[]>> {
  const out = new Map<number, SubscriptionPlanItem[]>(planIds.map((id) => [id, []]))
  if (planIds.length === 0) return out
  const rows = await db.selectFrom('subscription_plan_items').selectAll().where('plan_id', 'in', [...planIds]).orderBy('id').execute()
  for (const row of rows) out.get(row.plan_id)?.push(row)
  return out
}

/** Plans with their items, by sort_order descending then id; `enabledOnly` for what users may buy. */
export async function listSubscriptionPlans (db: Db, opts: { enabledOnly?: boolean } = {}): Promise<PlanWithItems[]> {
  let q = db.selectFrom('subscription_plans').selectAll()
  if (opts.enabledOnly === true) q = q.where('enabled', '=', true)
  const plans = await q.orderBy('sort_order', 'desc').orderBy('id', 'asc').execute()
  const items = await itemsOfPlans(db, plans.map((p) => p.id))
  return plans.map((plan) => ({ plan, items: items.get(plan.id) ?? [] }))
}

/** One plan with its items, enabled or not. */
export async function findSubscriptionPlan (db: Db, id: number): Promise<PlanWithItems | undefined> {
  const plan = await db.selectFrom('subscription_plans').selectAll().where('id', '=', id).executeTakeFirst()
  if (plan === undefined) return undefined
  return { plan, items: (await itemsOfPlans(db, [id])).get(id) ?? [] }
}

async function insertPlanItems (db: Db, planId: number, items: readonly PlanItemFields[]): Promise<SubscriptionPlanItem[]> {
  if (items.length === 0) return []
  return await db.insertInto('subscription_plan_items')
    .values(items.map((i) => ({ plan_id: planId, model_name: i.model_name, quota_type: i.quota_type, amount_total: i.amount_total })))
    .returningAll().execute()
    .then((rows) => rows.sort((a, b) => a.id - b.id))
}

/** Creates a plan and its items (run it in a transaction so both land or neither). */
export async function insertSubscriptionPlan (db: Db, fields: PlanFields, items: readonly PlanItemFields[]): Promise<PlanWithItems> {
  const plan = await db.insertInto('subscription_plans').values(fields).returningAll().executeTakeFirstOrThrow()
  return { plan, items: await insertPlanItems(db, plan.id, items) }
}

/**
 * Replaces a plan's fields and items; undefined when no such plan. Subscriptions already held keep
 * the items copied when they began. Run it in a transaction.
 */
export async function replaceSubscriptionPlan (db: Db, id: number, fields: PlanFields, items: readonly PlanItemFields[]): Promise<PlanWithItems | undefined> {
  const plan = await db.updateTable('subscription_plans').set({ ...fields, updated_at: nowSeconds() })
    .where('id', '=', id).returningAll().executeTakeFirst()
  if (plan === undefined) return undefined
  await db.deleteFrom('subscription_plan_items').where('plan_id', '=', id).execute()
  return { plan, items: await insertPlanItems(db, id, items) }
}

/** Enables or disables a plan; undefined when no such plan. */
export async function setSubscriptionPlanEnabled (db: Db, id: number, enabled: boolean): Promise<SubscriptionPlan | undefined> {
  return await db.updateTable('subscription_plans').set({ enabled, updated_at: nowSeconds() })
    .where('id', '=', id).returningAll().executeTakeFirst()
}

/** What {@link activateSubscription} needs. */
export interface ActivateSubscription {
  userId: number
  planId: number
  source: 'order' | 'admin' | 'renewal'
  /** The paid order (source 'order'); unique, so an order starts one subscription. */
  orderId?: number
  /** The period this one continues (source 'renewal'); unique, so a period is renewed once. */
  renewedFrom?: number
  /** Unix seconds; default now. */
  startTime?: number
  autoRenew?: boolean
}

/**
 * Starts one period of a plan for a user: the user_subscriptions row (end computed from the plan's
 * duration, see {@link periodEnd}) and a copy of the plan's items, each with the user's id. Run it
 * inside the transaction that paid for it (an order's completion, a wallet debit, a renewal), so
 * the subscription exists exactly when the payment does. Throws when the plan does not exist; a
 * second activation for the same order or renewal fails on the unique indexes.
 */
export async function activateSubscription (trx: Db, a: ActivateSubscription): Promise<SubscriptionWithItems> {
  const found = await findSubscriptionPlan(trx, a.planId)
  if (found === undefined) throw new Error(`subscription plan ${a.planId} does not exist`)
  const start = a.startTime ?? nowSeconds()
  const subscription = await trx.insertInto('user_subscriptions').values({
    user_id: a.userId,
    plan_id: a.planId,
    plan_title: found.plan.title,
    start_time: start,
    end_time: periodEnd(found.plan, start),
    status: 'active',
    source: a.source,
    order_id: a.orderId ?? null,
    renewed_from: a.renewedFrom ?? null,
    ...(a.autoRenew === undefined ? {} : { auto_renew: a.autoRenew })
  }).returningAll().executeTakeFirstOrThrow()
  const items = found.items.length === 0
    ? []
    : (await trx.insertInto('user_subscription_items').values(found.items.map((i) => ({
        user_subscription_id: subscription.id,
        user_id: a.userId,
        model_name: i.model_name,
        quota_type: i.quota_type,
        amount_total: i.amount_total
      }))).returningAll().execute()).sort((x, y) => x.id - y.id)
  return { subscription, items }
}

async function withItems (db: Db, subs: UserSubscription[]): Promise<SubscriptionWithItems[]> {
  if (subs.length === 0) return []
  const rows = await db.selectFrom('user_subscription_items').selectAll()
    .where('user_subscription_id', 'in', subs.map((s) => s.id)).orderBy('id').execute()
  const by = new Map<number, UserSubscriptionItem[]>(subs.map((s) => [s.id, []]))
  for (const row of rows) by.get(row.user_subscription_id)?.push(row)
  return subs.map((subscription) => ({ subscription, items: by.get(subscription.id) ?? [] }))
}

/**
 * A user's subscriptions with their items: the active ones (status active, period not ended by
 * `now`) first, then the others, each by end time descending. `historyLimit` bounds the others
 * (all when absent).
 */
export async function listUserSubscriptions (db: Db, userId: number, opts: { historyLimit?: number, now?: number } = {}): Promise<SubscriptionWithItems[]> {
  const now = opts.now ?? nowSeconds()
  const active = await db.selectFrom('user_subscriptions').selectAll()
    .where('user_id', '=', userId).where('status', '=', 'active').where('end_time', '>', now)
    .orderBy('end_time', 'desc').orderBy('id', 'desc').execute()
  let history = db.selectFrom('user_subscriptions').selectAll()
    .where('user_id', '=', userId).where((eb) => eb.or([eb('status', '<>', 'active'), eb('end_time', '<=', now)]))
    .orderBy('end_time', 'desc').orderBy('id', 'desc')
  if (opts.historyLimit !== undefined) history = history.limit(opts.historyLimit)
  return await withItems(db, [...active, ...await history.execute()])
}

/** One user subscription with its items. */
export async function findUserSubscription (db: Db, id: number): Promise<SubscriptionWithItems | undefined> {
  const sub = await db.selectFrom('user_subscriptions').selectAll().where('id', '=', id).executeTakeFirst()
  return sub === undefined ? undefined : (await withItems(db, [sub]))[0]
}

/**
 * Ends an active subscription now (status 'cancelled'); undefined when it is not active (unknown,
 * expired or cancelled already). One conditional UPDATE, so concurrent calls cancel it once.
 */
export async function cancelUserSubscription (db: Db, id: number): Promise<SubscriptionWithItems | undefined> {
  const sub = await db.updateTable('user_subscriptions').set({ status: 'cancelled', updated_at: nowSeconds() })
    .where('id', '=', id).where('status', '=', 'active')
    .returningAll().executeTakeFirst()
  return sub === undefined ? undefined : (await withItems(db, [sub]))[0]
}

/** Sets auto-renewal of `userId`'s own active subscription `id` (its period not ended); undefined when it is not one. */
export async function setSubscriptionAutoRenew (db: Db, userId: number, id: number, autoRenew: boolean): Promise<UserSubscription | undefined> {
  const now = nowSeconds()
  return await db.updateTable('user_subscriptions').set({ auto_renew: autoRenew, updated_at: now })
    .where('id', '=', id).where('user_id', '=', userId).where('status', '=', 'active').where('end_time', '>', now)
    .returningAll().executeTakeFirst()
}

/** A live user's billing preference. */
export async function findBillingPreference (db: Db, userId: number): Promise<BillingPreference | undefined> {
  const row = await db.selectFrom('users').select('billing_preference').where('id', '=', userId).where('deleted_at', 'is', null).executeTakeFirst()
  return row?.billing_preference
}

/** Sets a live user's billing preference; undefined when the user is gone. */
export async function setBillingPreference (db: Db, userId: number, preference: BillingPreference): Promise<BillingPreference | undefined> {
  const row = await db.updateTable('users').set({ billing_preference: preference })
    .where('id', '=', userId).where('deleted_at', 'is', null)
    .returning('billing_preference').executeTakeFirst()
  return row?.billing_preference
}

/**
 * Locks a live user's row (SELECT ... FOR UPDATE) for a wallet debit in the caller's transaction:
 * concurrent debits of one user run one after another, each seeing the balance the previous left.
 */
export async function lockUserForDebit (trx: Transaction<Database>, userId: number): Promise<User | undefined> {
  return await trx.selectFrom('users').selectAll().where('id', '=', userId).where('deleted_at', 'is', null).forUpdate().executeTakeFirst()
}

/** Takes `amount` from a user's quota in the caller's transaction (after {@link lockUserForDebit}); the row as it became. */
export async function debitUserQuota (trx: Transaction<Database>, userId: number, amount: number): Promise<User | undefined> {
  return await trx.updateTable('users').set((eb) => ({ quota: eb('quota', '-', amount) }))
    .where('id', '=', userId).where('deleted_at', 'is', null).where('quota', '>=', amount)
    .returningAll().executeTakeFirst()
}

/** Creates a pending subscription order. */
export async function insertSubscriptionOrder (db: Db, order: {
  user_id: number
  plan_id: number
  price_minor: number
  currency: string
  trade_no: string
  payment_method: string
  status?: SubscriptionOrder['status']
  complete_time?: number
}): Promise<SubscriptionOrder> {
  return await db.insertInto('subscription_orders').values(order).returningAll().executeTakeFirstOrThrow()
}

/** The order with this trade number, in any status. */
export async function findSubscriptionOrderByTradeNo (db: Db, tradeNo: string): Promise<SubscriptionOrder | undefined> {
  return await db.selectFrom('subscription_orders').selectAll().where('trade_no', '=', tradeNo).executeTakeFirst()
}

/**
 * Marks a pending order paid and returns it; undefined when it is not pending. One conditional
 * UPDATE: of concurrent completions (notifications, an admin) exactly one gets the order.
 */
export async function markSubscriptionOrderPaid (db: Db, tradeNo: string, now: number, providerRef?: string): Promise<SubscriptionOrder | undefined> {
  return await db.updateTable('subscription_orders')
    .set({ status: 'success', complete_time: now, ...(providerRef === undefined ? {} : { provider_ref: providerRef }) })
    .where('trade_no', '=', tradeNo).where('status', '=', 'pending')
    .returningAll().executeTakeFirst()
}

/** Marks a pending order expired (its checkout lapsed); undefined when it is not pending. */
export async function markSubscriptionOrderExpired (db: Db, tradeNo: string): Promise<SubscriptionOrder | undefined> {
  return await db.updateTable('subscription_orders').set({ status: 'expired' })
    .where('trade_no', '=', tradeNo).where('status', '=', 'pending')
    .returningAll().executeTakeFirst()
}

/** Ids of the entitlement items of subscription `id` (the Redis balances to drop when it ends). */
export async function userSubscriptionItemIds (db: Db, id: number): Promise<number[]> {
  const rows = await db.selectFrom('user_subscription_items').select('id').where('user_subscription_id', '=', id).orderBy('id').execute()
  return rows.map((r) => r.id)
}

/**
 * How the first period of subscription `id`'s chain (renewals lead back to it) was paid: its
 * order's payment method, 'admin' for a bind, undefined when there is no such subscription. A
 * chain begun by a Stripe order is renewed by Stripe, never from the wallet.
 */
export async function subscriptionChainPayment (db: Db, id: number): Promise<string | undefined> {
  const { rows } = await sql<{ payment_method: string | null, source: string }>`
    with recursive chain as (
      select id, renewed_from, order_id, source from user_subscriptions where id = ${id}
      union all
      select s.id, s.renewed_from, s.order_id, s.source from user_subscriptions s join chain c on s.id = c.renewed_from
    )
    select o.payment_method, c.source from chain c left join subscription_orders o on o.id = c.order_id
    where c.renewed_from is null
  `.execute(db)
  const root = rows[0]
  if (root === undefined) return undefined
  return root.payment_method ?? root.source
}

/** The paid order a payment provider knows by `ref` (its own order or checkout id). */
export async function findSubscriptionOrderByProviderRef (db: Db, ref: string): Promise<SubscriptionOrder | undefined> {
  return await db.selectFrom('subscription_orders').selectAll().where('provider_ref', '=', ref).executeTakeFirst()
}

/**
 * Marks the paid order `tradeNo` refunded (success to refunded: of concurrent calls one wins) and,
 * with `endPeriods`, cancels the active periods it paid for, its renewals included; the order and
 * the ids of the cancelled periods' items, or undefined when it was not a paid order.
 */
export async function refundSubscriptionOrderRow (trx: Transaction<Database>, tradeNo: string, endPeriods: boolean): Promise<{ order: SubscriptionOrder, itemIds: number[] } | undefined> {
  const order = await trx.updateTable('subscription_orders').set({ status: 'refunded' })
    .where('trade_no', '=', tradeNo).where('status', '=', 'success').returningAll().executeTakeFirst()
  if (order === undefined) return undefined
  if (!endPeriods) return { order, itemIds: [] }
  const { rows } = await sql<{ id: number }>`
    with recursive chain as (
      select id from user_subscriptions where order_id = ${order.id}
      union all
      select s.id from user_subscriptions s join chain c on s.renewed_from = c.id
    )
    update user_subscriptions set status = 'cancelled', updated_at = extract(epoch from now())::bigint
    where id in (select id from chain) and status = 'active'
    returning id
  `.execute(trx)
  if (rows.length === 0) return { order, itemIds: [] }
  const items = await trx.selectFrom('user_subscription_items').select('id').where('user_subscription_id', 'in', rows.map((r) => r.id)).execute()
  return { order, itemIds: items.map((i) => i.id) }
}
