// Frozen migration: imports nothing from the project.
//
// Two-factor sign-in (TOTP, RFC 6238). two_factor_auth: one row per user who started setting it
// up; the secret is sealed with the app's SecretBox (AES-256-GCM under CRYPTO_SECRET), `enabled`
// false until the user confirms a code; last_used_step is the last accepted 30-second time-step,
// so a code is accepted once. two_factor_backup_codes: the single-use backup codes, SHA-256
// hashes only; used_at set when spent.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('two_factor_auth')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret_encrypted', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('enabled_at', 'bigint')
    .addColumn('last_used_step', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .execute()
  await sql`create index two_factor_auth_enabled on two_factor_auth (user_id) where enabled`.execute(db)

  await db.schema.createTable('two_factor_backup_codes')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .addUniqueConstraint('two_factor_backup_codes_user_hash', ['user_id', 'code_hash'])
    .execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('two_factor_backup_codes').execute()
  await db.schema.dropTable('two_factor_auth').execute()
}
