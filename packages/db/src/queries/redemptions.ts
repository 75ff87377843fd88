import { REDEMPTION_STATUS } from '@modelgate/contracts'
import type { Kysely, Transaction } from 'kysely'
import type { Database, NewRedemption, Redemption } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

/** Redemption columns an admin API shows (everything but the soft-delete mark). */
export const REDEMPTION_COLUMNS = [
  'id', 'user_id', 'key', 'name', 'status', 'quota', 'created_time', 'redeemed_time', 'used_user_id'
] as const satisfies ReadonlyArray<keyof Redemption>
export type RedemptionRow = Pick<Redemption, typeof REDEMPTION_COLUMNS[number]>

/** The statuses an admin may set a code to (used is set by redeeming only). */
export type SettableRedemptionStatus = typeof REDEMPTION_STATUS.unused | typeof REDEMPTION_STATUS.disabled

/**
 * Live codes, newest first. A `keyword` matches part of the name (case-insensitive), and the id
 * too when it is a number.
 */
export async function listRedemptions (db: Db, q: { keyword?: string, offset: number, limit: number }): Promise<{ items: RedemptionRow[], total: number }> {
  let base = db.selectFrom('redemptions').where('deleted_at', 'is', null)
  const keyword = q.keyword?.trim() ?? ''
  if (keyword !== '') {
    const like = `%${keyword.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    base = base.where((eb) => eb.or([
      ...(/^\d{1,9}$/.test(keyword) ? [eb('id', '=', Number(keyword))] : []),
      eb('name', 'ilike', like)
    ]))
  }
  const [items, count] = await Promise.all([
    base.select(REDEMPTION_COLUMNS).orderBy('id', 'desc').offset(q.offset).limit(q.limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  ])
  return { items, total: Number(count.n) }
}

/** A live code by id. */
export async function findRedemption (db: Db, id: number): Promise<RedemptionRow | undefined> {
  return await db.selectFrom('redemptions').select(REDEMPTION_COLUMNS).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst()
}

/** Inserts codes in one statement; returns them in insertion (id) order. */
export async function insertRedemptions (db: Db, rows: NewRedemption[]): Promise<RedemptionRow[]> {
  const inserted = await db.insertInto('redemptions').values(rows).returning(REDEMPTION_COLUMNS).execute()
  return inserted.sort((a, b) => a.id - b.id)
}

/**
 * Changes name, quota or status of a live code that is not used (unused or disabled), in one
 * statement, so an edit racing a redemption either lands before it or is refused. Undefined when
 * nothing was changed.
 */
export async function updateUnusedRedemption (
  db: Db,
  id: number,
  patch: { name?: string, quota?: number, status?: SettableRedemptionStatus }
): Promise<RedemptionRow | undefined> {
  return await db.updateTable('redemptions').set(patch)
    .where('id', '=', id).where('status', 'in', [REDEMPTION_STATUS.unused, REDEMPTION_STATUS.disabled]).where('deleted_at', 'is', null)
    .returning(REDEMPTION_COLUMNS).executeTakeFirst()
}

/** Marks a live code deleted; false when there was none. */
export async function softDeleteRedemption (db: Db, id: number, now: number): Promise<boolean> {
  const res = await db.updateTable('redemptions').set({ deleted_at: now })
    .where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst()
  return res.numUpdatedRows > 0n
}

/**
 * Marks the live unused code `key` used by `userId` and returns it; undefined when the key is
 * unknown, disabled, used or deleted. The single conditional UPDATE is the redemption's lock:
 * of many concurrent attempts on one code exactly one gets a row back.
 */
export async function claimRedemption (db: Db, key: string, userId: number, now: number): Promise<RedemptionRow | undefined> {
  return await db.updateTable('redemptions').set({ status: REDEMPTION_STATUS.used, used_user_id: userId, redeemed_time: now })
    .where('key', '=', key).where('status', '=', REDEMPTION_STATUS.unused).where('deleted_at', 'is', null)
    .returning(REDEMPTION_COLUMNS).executeTakeFirst()
}
