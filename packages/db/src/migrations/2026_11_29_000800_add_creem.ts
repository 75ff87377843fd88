// Frozen migration: imports nothing from the project.
//
// Creem top-up: an order paid through Creem remembers its checkout (created with the order's trade
// number as request_id) and Creem's order id (what a refund names). creem_events holds the id of
// every webhook event handled: Creem retries deliveries, so an id seen before is acknowledged and
// skipped.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('top_ups')
    .addColumn('creem_checkout_id', 'text')
    .addColumn('creem_order_id', 'text')
    .execute()
  await sql`create unique index top_ups_creem_checkout on top_ups (creem_checkout_id) where creem_checkout_id is not null`.execute(db)
  await sql`create index top_ups_creem_order on top_ups (creem_order_id) where creem_order_id is not null`.execute(db)

  await db.schema.createTable('creem_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .execute()
  await sql`create index creem_events_created on creem_events (created_at)`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('creem_events').execute()
  await db.schema.alterTable('top_ups')
    .dropColumn('creem_checkout_id')
    .dropColumn('creem_order_id')
    .execute()
}
