import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

/**
 * One console sign-in, keyed by the session JWT's token id (jti). Times are unix seconds. A row
 * counts while `revoked_at` is null, `expires_at` is ahead and `session_version` equals the user's.
 */
export interface UserSessionsTable {
  /** The JWT's `jti`. */
  id: string
  user_id: number
  /** The user's session_version when the session began (or was renewed). */
  session_version: number
  created_at: Generated<number>
  /** The last request seen, written at most once a minute. */
  last_seen_at: Generated<number>
  /** The JWT's `exp`: the row may go after it. */
  expires_at: number
  /** When it was signed out or revoked; null while it holds. */
  revoked_at: number | null
  /** The client address (`req.ip`) of the last request seen. */
  ip: Generated<string>
  /** The User-Agent at sign-in (at most 512 characters). */
  user_agent: Generated<string>
}
export type UserSession = Selectable<UserSessionsTable>
export type NewUserSession = Insertable<UserSessionsTable>
export type UserSessionUpdate = Updateable<UserSessionsTable>
