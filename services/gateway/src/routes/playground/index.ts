import cookie from '@fastify/cookie'
import jwt from '@fastify/jwt'
import { revokedSessionKey, TOKEN_STATUS, USER_STATUS } from '@modelgate/contracts'
import { findUserWithSession } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import type { Caller } from '../../relay/auth.js'
import { RelayError, RM } from '../../relay/errors.js'
import { relay } from '../../relay/pipeline.js'

/** The console playground: the signed-in user's session (cookie + New-Api-User), billed to the user. */
export default async function playgroundRoutes (pg: FastifyInstance, opts: { sessionSecret: string }) {
  const deps = pg.relayDeps
  await pg.register(cookie)
  await pg.register(jwt, { secret: opts.sessionSecret, cookie: { cookieName: 'session', signed: false } })
  pg.post('/pg/chat/completions', async (req, reply) => {
    const claims = await req.jwtVerify<{ uid: number, sv: number, jti: string, reg?: 1 }>({ onlyCookie: true }).catch(() => undefined)
    const found = claims === undefined ? undefined : await findUserWithSession(pg.db, claims.uid, claims.jti)
    const user = found?.user
    // As the control plane checks it: the session's row (user_sessions) decides; a session
    // signed before rows were kept has none, and then only its logout marker in Redis counts.
    const revoked = claims === undefined || (found?.session !== undefined
      ? found.session.revoked_at !== null
      : claims.reg === 1 || await pg.redis.exists(revokedSessionKey(claims.jti)) === 1)
    if (claims === undefined || user === undefined || user.session_version !== claims.sv || revoked || req.headers['new-api-user'] !== String(user.id)) {
      throw new RelayError(401, 'invalid_request_error', 'not_logged_in', RM.notLoggedIn)
    }
    if (user.status !== USER_STATUS.enabled) throw new RelayError(403, 'invalid_request_error', 'user_banned', RM.userBanned)
    const body = req.body as Record<string, unknown> | undefined
    const group = typeof body?.['group'] === 'string' && body['group'] !== '' ? body['group'] : user.group
    const caller: Caller = {
      group,
      record: {
        token: {
          id: 0, name: 'playground', status: TOKEN_STATUS.enabled, remainQuota: 0, unlimited: true, expiredTime: -1, modelLimits: null, allowIps: [], group,
          rpmLimit: 0, tpmLimit: 0, concurrencyLimit: 0
        },
        user: { id: user.id, username: user.username, status: user.status, role: user.role, group: user.group, deleted: false, concurrencyLimit: user.concurrency_limit }
      }
    }
    if (body !== undefined) delete body['group']
    await relay(deps, req, reply, 'chat', caller)
    return reply
  })
}
