// Frozen migration: imports nothing from the project.
//
// Subscription plans. A plan (title, price in minor currency units, a duration) carries
// entitlement items: a model name and an amount per period, in quota units (quota_type 0) or in
// requests (quota_type 1). Buying a plan (subscription_orders, one per payment) or an admin's bind
// creates a user_subscriptions row for one period and copies the plan's items into
// user_subscription_items, whose amount_used the billing worker raises as requests paid by them
// settle. A renewal is a new user_subscriptions row (fresh items), never a reset of amount_used,
// so settlements of requests admitted before it still land on the items that admitted them.
// users.billing_preference says whether a request is paid by an entitlement or the wallet first.
// A task (tasks, midjourneys) remembers the item that paid for it, so a failed task's refund goes
// back to that item rather than to the wallet.
import { type Kysely, sql } from 'kysely'

const now = sql`extract(epoch from now())::bigint`

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('subscription_plans')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('subtitle', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('price_minor', 'bigint', (c) => c.notNull().check(sql`price_minor >= 0`))
    .addColumn('currency', 'text', (c) => c.notNull().defaultTo('USD'))
    .addColumn('duration_unit', 'text', (c) => c.notNull().check(sql`duration_unit in ('year', 'month', 'week', 'day', 'hour', 'custom')`))
    .addColumn('duration_value', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('custom_seconds', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('sort_order', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('stripe_price_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('creem_product_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(now))
    .execute()

  await db.schema.createTable('subscription_plan_items')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('plan_id', 'integer', (c) => c.notNull().references('subscription_plans.id').onDelete('cascade'))
    .addColumn('model_name', 'text', (c) => c.notNull())
    .addColumn('quota_type', 'smallint', (c) => c.notNull().defaultTo(0).check(sql`quota_type in (0, 1)`))
    .addColumn('amount_total', 'bigint', (c) => c.notNull().check(sql`amount_total > 0`))
    .execute()
  await sql`create index subscription_plan_items_plan on subscription_plan_items (plan_id)`.execute(db)

  await db.schema.createTable('subscription_orders')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('plan_id', 'integer', (c) => c.notNull().references('subscription_plans.id'))
    .addColumn('price_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('trade_no', 'text', (c) => c.notNull().unique())
    .addColumn('payment_method', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'success', 'failed', 'expired', 'refunded')`))
    .addColumn('create_time', 'bigint', (c) => c.notNull().defaultTo(now))
    .addColumn('complete_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('provider_ref', 'text')
    .execute()
  await sql`create index subscription_orders_user on subscription_orders (user_id, id desc)`.execute(db)

  await db.schema.createTable('user_subscriptions')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('plan_id', 'integer', (c) => c.notNull().references('subscription_plans.id'))
    .addColumn('plan_title', 'text', (c) => c.notNull())
    .addColumn('start_time', 'bigint', (c) => c.notNull())
    .addColumn('end_time', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status in ('active', 'expired', 'cancelled')`))
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('order', 'admin', 'renewal')`))
    .addColumn('auto_renew', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('order_id', 'integer', (c) => c.references('subscription_orders.id'))
    .addColumn('renewed_from', 'integer', (c) => c.references('user_subscriptions.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(now))
    .execute()
  await sql`create index user_subscriptions_user on user_subscriptions (user_id, status, end_time)`.execute(db)
  await sql`create index user_subscriptions_due on user_subscriptions (end_time) where status = 'active'`.execute(db)
  // One renewal per period: a second run of the schedule finds it taken.
  await sql`create unique index user_subscriptions_renewed_from on user_subscriptions (renewed_from) where renewed_from is not null`.execute(db)
  await sql`create unique index user_subscriptions_order on user_subscriptions (order_id) where order_id is not null`.execute(db)

  await db.schema.createTable('user_subscription_items')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_subscription_id', 'integer', (c) => c.notNull().references('user_subscriptions.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('model_name', 'text', (c) => c.notNull())
    .addColumn('quota_type', 'smallint', (c) => c.notNull().check(sql`quota_type in (0, 1)`))
    .addColumn('amount_total', 'bigint', (c) => c.notNull())
    .addColumn('amount_used', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()
  await sql`create index user_subscription_items_subscription on user_subscription_items (user_subscription_id)`.execute(db)

  await db.schema.alterTable('users')
    .addColumn('billing_preference', 'text', (c) => c.notNull().defaultTo('subscription_first')
      .check(sql`billing_preference in ('subscription_first', 'wallet_first', 'subscription_only', 'wallet_only')`))
    .execute()
  for (const table of ['tasks', 'midjourneys']) {
    await db.schema.alterTable(table).addColumn('subscription_item_id', 'integer').execute()
  }
}

export async function down (db: Kysely<any>): Promise<void> {
  for (const table of ['tasks', 'midjourneys']) {
    await db.schema.alterTable(table).dropColumn('subscription_item_id').execute()
  }
  await db.schema.alterTable('users').dropColumn('billing_preference').execute()
  await db.schema.dropTable('user_subscription_items').execute()
  await db.schema.dropTable('user_subscriptions').execute()
  await db.schema.dropTable('subscription_orders').execute()
  await db.schema.dropTable('subscription_plan_items').execute()
  await db.schema.dropTable('subscription_plans').execute()
}
