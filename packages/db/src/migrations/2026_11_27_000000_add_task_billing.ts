// Frozen migration: imports nothing from the project.
import { type Kysely, sql } from 'kysely'

/**
 * What billing needs of an asynchronous task (drawing, music, video): who pays (user and token),
 * what was charged for which model and group, the request id of the charge, when it was refunded
 * (0: never), and the poller's claim (unix ms until which one poller holds the task).
 */
export async function up (db: Kysely<any>): Promise<void> {
  for (const table of ['midjourneys', 'tasks']) {
    await db.schema
      .alterTable(table)
      .addColumn('token_id', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('token_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('unlimited_token', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('username', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('model_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('group', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('request_id', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('refunded_at', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute()
  }
  await db.schema.alterTable('midjourneys')
    .addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .execute()
  // The poller's scan: unfinished tasks, oldest claim first.
  await sql`create index midjourneys_poll on midjourneys (lease_until) where status not in ('SUCCESS', 'FAILURE')`.execute(db)
  await sql`create index tasks_poll on tasks (lease_until) where status not in ('SUCCESS', 'FAILURE')`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await sql`drop index if exists midjourneys_poll`.execute(db)
  await sql`drop index if exists tasks_poll`.execute(db)
  await db.schema.alterTable('midjourneys').dropColumn('updated_at').execute()
  for (const table of ['midjourneys', 'tasks']) {
    await db.schema.alterTable(table)
      .dropColumn('token_id').dropColumn('token_name').dropColumn('unlimited_token').dropColumn('username')
      .dropColumn('model_name').dropColumn('group').dropColumn('request_id').dropColumn('refunded_at').dropColumn('lease_until')
      .execute()
  }
}
