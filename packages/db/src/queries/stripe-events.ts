import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

/** Records a webhook event by id; false when it was recorded before (insert or ignore). */
export async function insertStripeEvent (db: Db, id: string, type: string): Promise<boolean> {
  const row = await db.insertInto('stripe_events').values({ id, type })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id').executeTakeFirst()
  return row !== undefined
}

/** Forgets a recorded event, so Stripe's retry of an event that failed midway is handled again. */
export async function deleteStripeEvent (db: Db, id: string): Promise<void> {
  await db.deleteFrom('stripe_events').where('id', '=', id).execute()
}
