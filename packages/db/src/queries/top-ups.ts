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
