// Frozen migration: imports nothing from the project.
//
// Daily check-ins: one row per user and day, the day as 'YYYY-MM-DD' text (new-api's format;
// byte-wise collation, so a month is a plain range of the index). The unique (user_id,
// checkin_date) is what makes a check-in happen once per day: of concurrent attempts one row is
// inserted, in the transaction that also credits the user. quota_awarded is in quota units.
// Rows go with their user.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('checkins')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('checkin_date', sql`text collate "C"`, (c) => c.notNull().check(sql`checkin_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'`))
    .addColumn('quota_awarded', 'bigint', (c) => c.notNull().check(sql`quota_awarded >= 0`))
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .addUniqueConstraint('checkins_user_date', ['user_id', 'checkin_date'])
    .execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('checkins').execute()
}
