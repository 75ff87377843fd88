// Frozen migration: imports nothing from the project.
//
// Passkeys (WebAuthn credentials), several per user. Only public material is kept: the
// credential id as the browser reports it (base64url, unique: one credential belongs to one
// account), the COSE public key, the authenticator's signature counter (moved forward by each
// accepted assertion; a counter that does not grow, once non-zero, marks a cloned authenticator),
// the transports the browser reported, whether the credential may be synced (device_type
// 'multiDevice') and is backed up, the user handle the authenticator holds for the account
// (base64url; a discoverable sign-in names it), a name the user chose, and when it was added and
// last used (null: never). Rows go with their user.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('passkeys')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'bytea', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`counter >= 0`))
    .addColumn('transports', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn('device_type', 'text', (c) => c.notNull().check(sql`device_type in ('singleDevice', 'multiDevice')`))
    .addColumn('backed_up', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('user_handle', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .addColumn('last_used_at', 'bigint')
    .execute()
  await db.schema.createIndex('passkeys_user_id').on('passkeys').column('user_id').execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('passkeys').execute()
}
