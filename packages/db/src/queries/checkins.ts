import type { Kysely, Transaction } from 'kysely'
import type { Checkin, Database, User } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

/** A check-in as its owner sees it. */
export type CheckinRecordRow = Pick<Checkin, 'checkin_date' | 'quota_awarded'>

/**
 * Records the check-in of `userId` on `date` ('YYYY-MM-DD'); undefined when that user already
 * has one that day. The unique (user_id, checkin_date) decides between concurrent attempts: a
 * second insert waits for the first transaction and then inserts nothing (or inserts, if the
 * first rolled back).
 */
export async function insertCheckin (db: Db, userId: number, date: string, quota: number): Promise<Checkin | undefined> {
  return await db.insertInto('checkins').values({ user_id: userId, checkin_date: date, quota_awarded: quota })
    .onConflict((oc) => oc.columns(['user_id', 'checkin_date']).doNothing())
    .returningAll().executeTakeFirst()
}

/** Whether `userId` has checked in on `date`. */
export async function hasCheckedIn (db: Db, userId: number, date: string): Promise<boolean> {
  const row = await db.selectFrom('checkins').select('id').where('user_id', '=', userId).where('checkin_date', '=', date).executeTakeFirst()
  return row !== undefined
}

/** The check-ins of `userId` from `from` to `to` ('YYYY-MM-DD', both included), newest first. */
export async function listCheckins (db: Db, userId: number, from: string, to: string): Promise<CheckinRecordRow[]> {
  return await db.selectFrom('checkins').select(['checkin_date', 'quota_awarded'])
    .where('user_id', '=', userId).where('checkin_date', '>=', from).where('checkin_date', '<=', to)
    .orderBy('checkin_date', 'desc').execute()
}

/** How many times `userId` has checked in, and the quota units it brought, all time. */
export async function checkinTotals (db: Db, userId: number): Promise<{ total_checkins: number, total_quota: number }> {
  const row = await db.selectFrom('checkins')
    .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.coalesce(eb.fn.sum<string | null>('quota_awarded'), eb.lit(0)).as('quota')])
    .where('user_id', '=', userId).executeTakeFirstOrThrow()
  return { total_checkins: Number(row.n), total_quota: Number(row.quota) }
}

/**
 * Adds a check-in's `quota` to a live user's balance in one statement; undefined when the user is
 * gone. Unlike console edits it applies whatever the balance: settlement may have left it below
 * zero, and a credit only raises it.
 */
export async function creditCheckinQuota (db: Db, userId: number, quota: number): Promise<User | undefined> {
  return await db.updateTable('users')
    .set((eb) => ({ quota: eb('quota', '+', quota) }))
    .where('id', '=', userId).where('deleted_at', 'is', null)
    .returningAll().executeTakeFirst()
}
