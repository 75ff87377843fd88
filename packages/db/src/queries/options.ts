import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

/** Every stored option as a key -> value map. */
export async function findAllOptions (db: Db): Promise<Map<string, string>> {
  const rows = await db.selectFrom('options').select(['key', 'value']).execute()
  return new Map(rows.map((r) => [r.key, r.value]))
}

/** Inserts or replaces one option. */
export async function upsertOption (db: Db, key: string, value: string): Promise<void> {
  await db
    .insertInto('options')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: Math.floor(Date.now() / 1000) }))
    .execute()
}
