import { type Kysely, sql, type Transaction } from 'kysely'
import type { Database, User } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

/** Role numbers (SPEC.md section 6). */
export const ROLE = { common: 1, admin: 10, root: 100 } as const

/**
 * Creates the super admin `username` with `passwordHash` when the users table is empty.
 * Replicas may race here: the unique index on live usernames lets exactly one insert win.
 * Returns the created user, or undefined when users already existed.
 */
export async function insertRootUserIfNone (
  db: Db,
  root: { username: string, passwordHash: string, quota: number }
): Promise<User | undefined> {
  const { rows } = await sql<User>`
    insert into users (username, display_name, password_hash, role, status, quota)
    select ${root.username}, 'Root User', ${root.passwordHash}, ${ROLE.root}, 1, ${root.quota}
    where not exists (select 1 from users)
    on conflict (username) where deleted_at is null do nothing
    returning *
  `.execute(db)
  return rows[0]
}

/** A live (not deregistered) user by id. */
export async function findUserById (db: Db, id: number): Promise<User | undefined> {
  return await db.selectFrom('users').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst()
}
