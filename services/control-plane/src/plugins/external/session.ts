import cookie from '@fastify/cookie'
import jwt from '@fastify/jwt'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export const SESSION_COOKIE = 'session'

/** Session JWT payload: user id, the user's session version at sign-in, and a token id for logout. */
export interface SessionClaims {
  uid: number
  sv: number
  jti: string
  /**
   * 1 on sessions registered in user_sessions when they began: such a token without its row was
   * revoked. Tokens signed before sessions were kept lack it and are registered on first use.
   */
  reg?: 1
}

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: SessionClaims
    user: SessionClaims
  }
}

/** Cookies and JWTs signed with SESSION_SECRET, shared by every control-plane replica. */
export default fp(async (app: FastifyInstance, opts: { secret: string, ttlHours: number }) => {
  await app.register(cookie)
  await app.register(jwt, {
    secret: opts.secret,
    cookie: { cookieName: SESSION_COOKIE, signed: false },
    sign: { expiresIn: `${opts.ttlHours}h` }
  })
}, { name: 'session' })
