import type { Kysely, Transaction } from 'kysely'
import type { Database, NewTopUp, TopUp } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

/** Creates a pending payment order. */
export async function insertTopUp (db: Db, order: NewTopUp): Promise<TopUp> {
  return await db.insertInto('top_ups').values(order).returningAll().executeTakeFirstOrThrow()
}

/** The order with this trade number, in any status. */
export async function findTopUpByTradeNo (db: Db, tradeNo: string): Promise<TopUp | undefined> {
  return await db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirst()
}

/**
 * Marks a pending order paid and returns it; undefined when it is not pending (already settled,
 * or unknown). One conditional UPDATE, so of concurrent payment notifications exactly one settles
 * the order and may credit it.
 */
export async function completeTopUp (db: Db, tradeNo: string, now: number): Promise<TopUp | undefined> {
  return await db.updateTable('top_ups').set({ status: 'success', complete_time: now })
    .where('trade_no', '=', tradeNo).where('status', '=', 'pending')
    .returningAll().executeTakeFirst()
}

/** An order with its payer's username ('' when the account is gone). */
export type TopUpRow = TopUp & { username: string }

/** Filters of an order list; absent ones do not filter. */
export interface TopUpFilter {
  /** Part of the trade number, or of the payer's username (case-insensitive). */
  keyword?: string
  status?: TopUp['status']
  userId?: number
  /** Unix seconds, inclusive, on the creation time. */
  start?: number
  /** Unix seconds, exclusive. */
  end?: number
}

/** Orders matching `filter`, newest first, one page of them and how many match in all. */
export async function listTopUps (db: Db, filter: TopUpFilter, page: { offset: number, limit: number }): Promise<{ items: TopUpRow[], total: number }> {
  let base = db.selectFrom('top_ups').leftJoin('users', 'users.id', 'top_ups.user_id')
  const keyword = filter.keyword?.trim() ?? ''
  if (keyword !== '') {
    const like = `%${keyword.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    base = base.where((eb) => eb.or([eb('top_ups.trade_no', 'ilike', like), eb('users.username', 'ilike', like)]))
  }
  if (filter.status !== undefined) base = base.where('top_ups.status', '=', filter.status)
  if (filter.userId !== undefined) base = base.where('top_ups.user_id', '=', filter.userId)
  if (filter.start !== undefined) base = base.where('top_ups.create_time', '>=', filter.start)
  if (filter.end !== undefined) base = base.where('top_ups.create_time', '<', filter.end)
  const [items, count] = await Promise.all([
    base.selectAll('top_ups').select((eb) => eb.fn.coalesce('users.username', eb.val('')).as('username'))
      .orderBy('top_ups.id', 'desc').offset(page.offset).limit(page.limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  ])
  return { items, total: Number(count.n) }
}

/** Remembers the Checkout Session created for the order `tradeNo`. */
export async function setTopUpStripeSession (db: Db, tradeNo: string, sessionId: string): Promise<void> {
  await db.updateTable('top_ups').set({ stripe_session_id: sessionId }).where('trade_no', '=', tradeNo).execute()
}

/** Remembers the PaymentIntent that paid the order `tradeNo` (what refunds and disputes name). */
export async function setTopUpStripePaymentIntent (db: Db, tradeNo: string, paymentIntent: string): Promise<void> {
  await db.updateTable('top_ups').set({ stripe_payment_intent: paymentIntent }).where('trade_no', '=', tradeNo).execute()
}

/** The order paid through this Stripe PaymentIntent, in any status. */
export async function findTopUpByStripePaymentIntent (db: Db, paymentIntent: string): Promise<TopUp | undefined> {
  return await db.selectFrom('top_ups').selectAll().where('stripe_payment_intent', '=', paymentIntent).executeTakeFirst()
}

/**
 * Marks a paid order refunded and returns it; undefined when it is not `success` (never paid, or
 * refunded already). One conditional UPDATE, so of concurrent refund events exactly one may debit.
 */
export async function refundTopUp (db: Db, tradeNo: string, now: number): Promise<TopUp | undefined> {
  return await db.updateTable('top_ups').set({ status: 'refunded', refunded_at: now })
    .where('trade_no', '=', tradeNo).where('status', '=', 'success')
    .returningAll().executeTakeFirst()
}

/** Remembers the Creem checkout created for the order `tradeNo`. */
export async function setTopUpCreemCheckout (db: Db, tradeNo: string, checkoutId: string): Promise<void> {
  await db.updateTable('top_ups').set({ creem_checkout_id: checkoutId }).where('trade_no', '=', tradeNo).execute()
}

/** Remembers Creem's order id for the paid order `tradeNo` (what a refund names). */
export async function setTopUpCreemOrder (db: Db, tradeNo: string, orderId: string): Promise<void> {
  await db.updateTable('top_ups').set({ creem_order_id: orderId }).where('trade_no', '=', tradeNo).execute()
}

/** The order paid through this Creem order, in any status. */
export async function findTopUpByCreemOrder (db: Db, orderId: string): Promise<TopUp | undefined> {
  return await db.selectFrom('top_ups').selectAll().where('creem_order_id', '=', orderId).executeTakeFirst()
}
