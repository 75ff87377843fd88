// Frozen migration: imports nothing from the project.
//
// Stripe top-up: an order remembers its currency (ISO code, the sum in `money` is in it), its
// Checkout Session and PaymentIntent (a refund or a
// dispute names only the charge's PaymentIntent), and may end as 'refunded' once a paid order is
// refunded or its dispute lost (refunded_at, Unix seconds; 0 until then). stripe_events holds the
// id of every webhook event handled: Stripe delivers at least once, so an id seen before is
// acknowledged and skipped.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('top_ups')
    .addColumn('currency', 'text')
    .addColumn('stripe_session_id', 'text')
    .addColumn('stripe_payment_intent', 'text')
    .addColumn('refunded_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()
  await sql`alter table top_ups drop constraint top_ups_status`.execute(db)
  await sql`alter table top_ups add constraint top_ups_status check (status in ('pending', 'success', 'failed', 'expired', 'refunded'))`.execute(db)
  await sql`create unique index top_ups_stripe_session on top_ups (stripe_session_id) where stripe_session_id is not null`.execute(db)
  await sql`create index top_ups_stripe_payment_intent on top_ups (stripe_payment_intent) where stripe_payment_intent is not null`.execute(db)

  await db.schema.createTable('stripe_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .execute()
  await sql`create index stripe_events_created on stripe_events (created_at)`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('stripe_events').execute()
  await sql`update top_ups set status = 'success' where status = 'refunded'`.execute(db)
  await sql`alter table top_ups drop constraint top_ups_status`.execute(db)
  await sql`alter table top_ups add constraint top_ups_status check (status in ('pending', 'success', 'failed', 'expired'))`.execute(db)
  await db.schema.alterTable('top_ups')
    .dropColumn('currency')
    .dropColumn('stripe_session_id')
    .dropColumn('stripe_payment_intent')
    .dropColumn('refunded_at')
    .execute()
}
