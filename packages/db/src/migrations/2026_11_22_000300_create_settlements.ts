// Frozen migration: imports nothing from the project.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  // One row per settled usage event: the idempotency record even when consume logs are off
  // (LogConsumeEnabled). Old rows are pruned once redelivery is impossible.
  await db.schema
    .createTable('settlements')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('quota', 'bigint', (c) => c.notNull())
    .addColumn('settled_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .execute()
  await sql`create index settlements_settled_at on settlements (settled_at)`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('settlements').execute()
}
