import Type, { type Static } from 'typebox'
import { ApiEnvelope } from './api.js'

/** One signed-in console session of the caller, as `GET /api/user/sessions` lists it. Times are unix seconds. */
export const SessionView = Type.Object({
  /** The session's id (its token id); what `DELETE /api/user/sessions/{id}` takes. */
  id: Type.String(),
  /** The browser (or client) and its major version read from the User-Agent ("Chrome 131", "curl 8.5.0"); '' when not recognised. */
  browser: Type.String(),
  /** The operating system or device read from the User-Agent ("Windows", "iPhone", "Android 14"); '' when not recognised. */
  os: Type.String(),
  /** The User-Agent as sent at sign-in (at most 512 characters). */
  user_agent: Type.String(),
  /** The client address of the last request seen. */
  ip: Type.String(),
  /** When the session began. */
  created_at: Type.Integer(),
  /** The last request seen (written at most once a minute). */
  last_seen_at: Type.Integer(),
  /** When its cookie expires. */
  expires_at: Type.Integer(),
  /** The session of this request ("this device"). */
  current: Type.Boolean()
})
export type SessionView = Static<typeof SessionView>

/** `GET /api/user/sessions`: the caller's sessions that still hold, this one first, then by last seen. */
export const SessionListResponse = ApiEnvelope(Type.Array(SessionView))

/** `DELETE /api/user/sessions/{id}`. */
export const SessionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })
export type SessionParams = Static<typeof SessionParams>

/** `DELETE /api/user/sessions` (every other session) and `/{id}`: how many sessions were ended. */
export const SessionRevokeResponse = ApiEnvelope(Type.Integer())
