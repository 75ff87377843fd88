// Frozen migration: imports nothing from the project.
//
// user_sessions: one row per console sign-in, keyed by the session JWT's token id (jti), so a
// user can list where they are signed in and end one session or all the others. The row is
// checked with the user on every signed-in request (one query, joined by primary key).
// session_version is the user's at sign-in: a bump of users.session_version (password change,
// reset, ban) ends every older row without touching it. revoked_at is set when a session is
// signed out or revoked; rows stay until they expire (expires_at, the JWT's exp), so a revoked
// token is refused for as long as it could be presented. last_seen_at is written at most once a
// minute per session; ip is the address of that last request; user_agent the sign-in's.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('user_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('session_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('ip', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('user_agent', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
  await db.schema.createIndex('user_sessions_user_id').on('user_sessions').columns(['user_id', 'expires_at']).execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('user_sessions').execute()
}
