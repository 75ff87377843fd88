import { createHash, createHmac, randomUUID } from 'node:crypto'
import { revokedSessionKey } from '@modelgate/contracts'
import { findUserByAccessTokenHash, findUserById, ROLE, updateUser, type User } from '@modelgate/db'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError, forbidden, unauthorized } from '../../lib/errors.js'
import { M } from '../../lib/messages.js'
import { SESSION_COOKIE, type SessionClaims } from '../external/session.js'

/** Who may call a route: anyone, a signed-in user, an admin (role >= 10), the super admin (100). */
export type AccessLevel = 'public' | 'user' | 'admin' | 'root'
const MIN_ROLE: Record<Exclude<AccessLevel, 'public'>, number> = { user: ROLE.common, admin: ROLE.admin, root: ROLE.root }

/** The caller of an authenticated route. */
export interface AuthContext {
  user: User
  via: 'session' | 'access_token'
  /** The session's claims when signed in through the cookie. */
  session?: SessionClaims & { exp?: number }
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
    /** The caller when signed in, else null; never throws (for routes that act differently when signed in). */
    optionalAuth: (req: FastifyRequest) => Promise<AuthContext | null>
    /** What is stored of a personal access token: HMAC-SHA256 under a key derived from CRYPTO_SECRET. */
    accessTokenHash: (token: string) => string
  }
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

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
      let claims: SessionClaims & { exp?: number }
      try {
        claims = await req.jwtVerify<SessionClaims & { exp?: number }>({ onlyCookie: true })
      } catch {
        throw unauthorized(M.notLoggedIn)
      }
      const [user, revoked] = await Promise.all([findUserById(app.db, claims.uid), app.redis.exists(revokedSessionKey(claims.jti))])
      if (user === undefined || revoked === 1 || user.session_version !== claims.sv) throw unauthorized(M.notLoggedIn)
      ctx = { user, via: 'session', session: claims }
    }
    // CSRF defence: a cross-site form can carry the cookie but cannot set this header.
    if (req.headers['new-api-user'] !== String(ctx.user.id)) throw unauthorized(M.userHeaderMismatch)
    if (ctx.user.status !== 1) throw unauthorized(M.userBanned)
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

  app.decorate('startSession', async (req: FastifyRequest, reply: FastifyReply, user: User) => {
    const token = await reply.jwtSign({ uid: user.id, sv: user.session_version, jti: randomUUID() })
    reply.setCookie(SESSION_COOKIE, token, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: req.protocol === 'https',
      maxAge: opts.ttlHours * 3600
    })
  })

  app.decorate('endSession', async (req: FastifyRequest, reply: FastifyReply) => {
    const claims = req.auth?.session ?? await req.jwtVerify<SessionClaims & { exp?: number }>({ onlyCookie: true }).catch(() => undefined)
    if (claims !== undefined) {
      const ttl = Math.max(1, (claims.exp ?? Math.floor(Date.now() / 1000) + opts.ttlHours * 3600) - Math.floor(Date.now() / 1000))
      await app.redis.set(revokedSessionKey(claims.jti), '1', 'EX', ttl)
    }
    reply.clearCookie(SESSION_COOKIE, { path: '/' })
  })
}, { name: 'auth', dependencies: ['db', 'redis', 'session'] })
