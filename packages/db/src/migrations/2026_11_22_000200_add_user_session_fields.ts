// Frozen migration: imports nothing from the project.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    // Bumped whenever every session of the user must end (password change or reset, ban, delete).
    .addColumn('session_version', 'integer', (c) => c.notNull().defaultTo(0))
    // True while the account still has the password it was created with by the system (root/123456).
    .addColumn('password_is_default', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute()
  // The only account the system creates with a default password is the first super admin.
  await sql`update users set password_is_default = true where id = (select min(id) from users where role = 100)`.execute(db)
  await sql`create index users_inviter on users (inviter_id) where inviter_id <> 0`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await sql`drop index users_inviter`.execute(db)
  await db.schema.alterTable('users').dropColumn('session_version').dropColumn('password_is_default').execute()
}
