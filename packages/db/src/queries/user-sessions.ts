import type { Kysely, Transaction } from 'kysely'
import type { Database, NewUserSession, User, UserSession } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

/** What the per-request check needs of a session row. */
export type SessionCheck = Pick<UserSession, 'revoked_at' | 'last_seen_at' | 'session_version'>

/** Registers a session (a sign-in, or a session from before the table met for the first time); a row already there stays. */
export async function insertUserSession (db: Db, row: NewUserSession): Promise<void> {
  await db.insertInto('user_sessions').values(row).onConflict((oc) => oc.column('id').doNothing()).execute()
}

/**
 * A live user and, when it exists, the row of session `jti`, in one query (the check every
 * signed-in request makes). Undefined when the user is gone; `session` undefined when no row has that id.
 */
export async function findUserWithSession (db: Db, userId: number, jti: string): Promise<{ user: User, session: SessionCheck | undefined } | undefined> {
  const row = await db.selectFrom('users')
    .leftJoin('user_sessions as s', (join) => join.onRef('s.user_id', '=', 'users.id').on('s.id', '=', jti))
    .selectAll('users')
    .select(['s.id as s_id', 's.revoked_at as s_revoked_at', 's.last_seen_at as s_last_seen_at', 's.session_version as s_session_version'])
    .where('users.id', '=', userId).where('users.deleted_at', 'is', null)
    .executeTakeFirst()
  if (row === undefined) return undefined
  const { s_id: id, s_revoked_at: revokedAt, s_last_seen_at: lastSeenAt, s_session_version: version, ...user } = row
  return {
    user,
    session: id === null ? undefined : { revoked_at: revokedAt, last_seen_at: lastSeenAt ?? 0, session_version: version ?? -1 }
  }
}

/**
 * Records a request of session `id` at `now` from `ip`, unless one was recorded in the last
 * `minIntervalS` seconds (checked in the statement, so replicas racing write once). True when written.
 */
export async function touchUserSession (db: Db, id: string, now: number, ip: string, minIntervalS: number): Promise<boolean> {
  const result = await db.updateTable('user_sessions').set({ last_seen_at: now, ip })
    .where('id', '=', id).where('last_seen_at', '<=', now - minIntervalS).where('revoked_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** The sessions of a user that still hold at `now` under `sessionVersion`, most recently seen first. */
export async function listUserSessions (db: Db, userId: number, sessionVersion: number, now: number): Promise<UserSession[]> {
  return await db.selectFrom('user_sessions').selectAll()
    .where('user_id', '=', userId).where('session_version', '=', sessionVersion)
    .where('revoked_at', 'is', null).where('expires_at', '>', now)
    .orderBy('last_seen_at', 'desc').orderBy('created_at', 'desc').orderBy('id')
    .execute()
}

/**
 * Marks sessions of a user revoked at `now`: one (`only`), or every one but `except`. Only those
 * not yet revoked or expired; returns them (id and expiry) for whoever must forget them too.
 */
export async function revokeUserSessions (db: Db, userId: number, now: number, which: { only?: string, except?: string } = {}): Promise<Array<Pick<UserSession, 'id' | 'expires_at'>>> {
  let query = db.updateTable('user_sessions').set({ revoked_at: now })
    .where('user_id', '=', userId).where('revoked_at', 'is', null).where('expires_at', '>', now)
  if (which.only !== undefined) query = query.where('id', '=', which.only)
  if (which.except !== undefined) query = query.where('id', '<>', which.except)
  return await query.returning(['id', 'expires_at']).execute()
}

/** A session going on under a new session version and expiry (its cookie signed again). */
export async function renewUserSession (db: Db, id: string, patch: { session_version: number, expires_at: number }): Promise<void> {
  await db.updateTable('user_sessions').set(patch).where('id', '=', id).execute()
}

/** Removes a user's sessions that expired before `now` (their tokens are refused by their expiry alone); how many. */
export async function deleteExpiredUserSessions (db: Db, userId: number, now: number): Promise<number> {
  const result = await db.deleteFrom('user_sessions').where('user_id', '=', userId).where('expires_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Ends every session of a user at once (their tokens carry the old version); the new version, undefined when the user is gone. */
export async function bumpSessionVersion (db: Db, userId: number): Promise<number | undefined> {
  const row = await db.updateTable('users').set((eb) => ({ session_version: eb('session_version', '+', 1) }))
    .where('id', '=', userId).returning('session_version').executeTakeFirst()
  return row?.session_version
}
