import { createHash, createHmac, randomUUID } from 'node:crypto'
import { revokedSessionKey, USER_STATUS, ROLES } from '@modelgate/contracts'
import {
  deleteExpiredUserSessions,
  findUserByAccessTokenHash,
  findUserWithSession,
  insertUserSession,
  renewUserSession,
  revokeUserSessions,
  touchUserSession,
  updateUser,
  type User
} from '@modelgate/db'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError, forbidden, unauthorized } from '../../lib/errors.js'
import { M } from '../../lib/messages.js'
import { SESSION_COOKIE, type SessionClaims } from '../external/session.js'

/** Who may call a route: anyone, a signed-in user, an admin (ROLES.admin or above), the super admin (ROLES.root). */
export type AccessLevel = 'public' | 'user' | 'admin' | 'root'
const MIN_ROLE: Record<Exclude<AccessLevel, 'public'>, number> = { user: ROLES.common, admin: ROLES.admin, root: ROLES.root }

/** The caller of an authenticated route. */
export interface AuthContext {
  user: User
  via: 'session' | 'access_token'
  /** The session's claims when signed in through the cookie. */
  session?: SessionClaims & { exp?: number, iat?: number }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required on every /api route (checked at start). */
    auth?: AccessLevel
  }
  interface FastifyRequest {
    auth: AuthContext | null
  }
  interface FastifyInstance {
    /** Every /api route with its access level, for the permission-matrix test. */
    routeAccess: Array<{ method: string, url: string, auth: AccessLevel }>
    /** Signs the user in on this response (sets the session cookie). */
    startSession: (req: FastifyRequest, reply: FastifyReply, user: User) => Promise<void>
    /** Ends the request's session (revokes its token id until expiry, clears the cookie). */
    endSession: (req: FastifyRequest, reply: FastifyReply) => Promise<void>
    /**
     * Signs the request's session again under `user`'s current session version (after a bump that
     * ended the user's other sessions): same token id, so the session keeps its row and history.
     */
    renewSession: (req: FastifyRequest, reply: FastifyReply, user: User) => Promise<void>
    /** The caller when signed in, else null; never throws (for routes that act differently when signed in). */
    optionalAuth: (req: FastifyRequest) => Promise<AuthContext | null>
    /** What is stored of a personal access token: HMAC-SHA256 under a key derived from CRYPTO_SECRET. */
    accessTokenHash: (token: string) => string
  }
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** A session's last-seen time and address are written at most this often (seconds). */
export const LAST_SEEN_INTERVAL_S = 60
/** Longest User-Agent kept with a session. */
const USER_AGENT_MAX = 512

const nowS = (): number => Math.floor(Date.now() / 1000)
const userAgentOf = (req: FastifyRequest): string => String(req.headers['user-agent'] ?? '').slice(0, USER_AGENT_MAX)

export default fp(async (app: FastifyInstance, opts: { ttlHours: number, cryptoSecret: string }) => {
  app.decorateRequest('auth', null)
  app.decorate('routeAccess', [])
  // Keyed, so a copy of the users table alone does not let anyone test guesses offline.
  const hmacKey = createHash('sha256').update(`modelgate:access-token:v1:${opts.cryptoSecret}`).digest()
  const accessTokenHash = (token: string): string => createHmac('sha256', hmacKey).update(token).digest('hex')
  app.decorate('accessTokenHash', accessTokenHash)

  /** The owner of an access token; one stored before keyed hashes (plain SHA-256) is upgraded on use. */
  async function findByAccessToken (token: string): Promise<User | undefined> {
    const hash = accessTokenHash(token)
    // Both forms in one query: a concurrent request upgrading the same token between two
    // lookups would otherwise make this one find neither.
    const user = await findUserByAccessTokenHash(app.db, [hash, sha256(token)])
    if (user !== undefined && user.access_token_hash !== hash) await updateUser(app.db, user.id, { access_token_hash: hash })
    return user
  }

  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api')) return
    const auth = route.config?.auth
    // Fail closed: a missing or misspelt level (which MIN_ROLE would not know) stops the start.
    if (auth !== 'public' && (auth === undefined || !Object.hasOwn(MIN_ROLE, auth))) {
      throw new Error(`route ${String(route.method)} ${route.url} declares no known access level (config.auth: ${String(auth)})`)
    }
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') app.routeAccess.push({ method, url: route.url, auth })
    }
  })

  async function authenticate (req: FastifyRequest): Promise<AuthContext> {
    const authorization = req.headers.authorization
    let ctx: AuthContext
    if (typeof authorization === 'string' && authorization.trim() !== '') {
      const token = authorization.trim().replace(/^Bearer\s+/i, '')
      const user = await findByAccessToken(token)
      if (user === undefined) throw unauthorized(M.invalidAccessToken)
      ctx = { user, via: 'access_token' }
    } else {
      if (req.cookies[SESSION_COOKIE] === undefined) throw unauthorized(M.notLoggedIn)
      let claims: SessionClaims & { exp?: number, iat?: number }
      try {
        claims = await req.jwtVerify<SessionClaims & { exp?: number, iat?: number }>({ onlyCookie: true })
      } catch {
        throw unauthorized(M.notLoggedIn)
      }
      // The user and the session's row in one query: the session check costs no extra round trip.
      const found = await findUserWithSession(app.db, claims.uid, claims.jti)
      if (found === undefined || found.user.session_version !== claims.sv) throw unauthorized(M.notLoggedIn)
      const { user, session } = found
      const now = nowS()
      if (session === undefined) {
        // No row: revoked and pruned if the session was registered at sign-in; otherwise signed
        // before sessions were kept, and registered now unless it was logged out back then.
        if (claims.reg === 1 || await app.redis.exists(revokedSessionKey(claims.jti)) === 1) throw unauthorized(M.notLoggedIn)
        await insertUserSession(app.db, {
          id: claims.jti,
          user_id: user.id,
          session_version: claims.sv,
          created_at: claims.iat ?? now,
          last_seen_at: now,
          expires_at: claims.exp ?? now + opts.ttlHours * 3600,
          ip: req.ip,
          user_agent: userAgentOf(req)
        })
      } else {
        if (session.revoked_at !== null || session.session_version !== claims.sv) throw unauthorized(M.notLoggedIn)
        if (now - session.last_seen_at >= LAST_SEEN_INTERVAL_S) await touchUserSession(app.db, claims.jti, now, req.ip, LAST_SEEN_INTERVAL_S)
      }
      ctx = { user, via: 'session', session: claims }
    }
    // CSRF defence: a cross-site form can carry the cookie but cannot set this header.
    if (req.headers['new-api-user'] !== String(ctx.user.id)) throw unauthorized(M.userHeaderMismatch)
    if (ctx.user.status !== USER_STATUS.enabled) throw unauthorized(M.userBanned)
    return ctx
  }

  app.addHook('onRequest', async (req) => {
    const level = req.routeOptions.config.auth
    if (level === undefined || level === 'public') return
    const ctx = await authenticate(req)
    if (ctx.user.role < MIN_ROLE[level]) throw forbidden(M.permissionDenied)
    req.auth = ctx
  })

  app.decorate('optionalAuth', async (req: FastifyRequest) => {
    try {
      return await authenticate(req)
    } catch (err) {
      if (err instanceof ApiError) return null
      throw err
    }
  })

  async function setSessionCookie (req: FastifyRequest, reply: FastifyReply, user: User, jti: string): Promise<void> {
    const claims: SessionClaims = { uid: user.id, sv: user.session_version, jti, reg: 1 }
    const token = await reply.jwtSign(claims)
    reply.setCookie(SESSION_COOKIE, token, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: req.protocol === 'https',
      maxAge: opts.ttlHours * 3600
    })
  }

  app.decorate('startSession', async (req: FastifyRequest, reply: FastifyReply, user: User) => {
    const jti = randomUUID()
    const now = nowS()
    // The row first: a cookie is never handed out for a session the check would not find.
    await insertUserSession(app.db, {
      id: jti,
      user_id: user.id,
      session_version: user.session_version,
      created_at: now,
      last_seen_at: now,
      expires_at: now + opts.ttlHours * 3600,
      ip: req.ip,
      user_agent: userAgentOf(req)
    })
    // The user's expired rows go here rather than in a periodic job: they refuse nothing any more.
    await deleteExpiredUserSessions(app.db, user.id, now)
    await setSessionCookie(req, reply, user, jti)
  })

  app.decorate('renewSession', async (req: FastifyRequest, reply: FastifyReply, user: User) => {
    const jti = req.auth?.session?.jti
    if (jti === undefined) return
    await renewUserSession(app.db, jti, { session_version: user.session_version, expires_at: nowS() + opts.ttlHours * 3600 })
    await setSessionCookie(req, reply, user, jti)
  })

  app.decorate('endSession', async (req: FastifyRequest, reply: FastifyReply) => {
    const claims = req.auth?.session ?? await req.jwtVerify<SessionClaims & { exp?: number }>({ onlyCookie: true }).catch(() => undefined)
    if (claims !== undefined) {
      const now = nowS()
      await revokeUserSessions(app.db, claims.uid, now, { only: claims.jti })
      // Also in Redis until it would expire: the gateway's playground checks sessions there.
      await app.redis.set(revokedSessionKey(claims.jti), '1', 'EX', Math.max(1, (claims.exp ?? now + opts.ttlHours * 3600) - now))
    }
    reply.clearCookie(SESSION_COOKIE, { path: '/' })
  })
}, { name: 'auth', dependencies: ['db', 'redis', 'session'] })
