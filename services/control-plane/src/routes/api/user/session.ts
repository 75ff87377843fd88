import { randomBytes } from 'node:crypto'
import { findLiveUserByLogin, updateUser } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { ApiError, fail, ok } from '../../../lib/errors.js'
import { M } from '../../../lib/messages.js'
import { checkTurnstile } from '../../../lib/turnstile.js'
import { publicUser, verifyPassword } from '../../../services/users.js'

/**
 * Failed logins before a lockout, per login name and per client address, and the window they are
 * counted in. Counters live in Redis, so every replica sees the same ones. The address is the
 * socket's unless it came through a proxy listed in TRUST_PROXY, so a client rotating
 * X-Forwarded-For stays one address.
 */
const MAX_FAILURES = 10
const MAX_FAILURES_PER_IP = 20
const LOCKOUT_S = 15 * 60
const failuresKey = (login: string) => `login:fail:${login.toLowerCase()}`
const ipFailuresKey = (ip: string) => `login:fail-ip:${ip}`

const routes: FastifyPluginAsyncTypebox<{ turnstileVerifyUrl: string }> = async (app, opts) => {
  app.post('/login', {
    config: { auth: 'public', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: {
      querystring: Type.Object({ turnstile: Type.Optional(Type.String()) }),
      body: Type.Object({ username: Type.String({ maxLength: 128 }), password: Type.String({ maxLength: 128 }) })
    }
  }, async (req, reply) => {
    const options = await app.loadOptions()
    if (!options.bool('PasswordLoginEnabled')) throw fail(M.passwordLoginDisabled)
    const { username, password } = req.body
    if (username.trim() === '' || password === '') throw fail(M.usernamePasswordEmpty)
    await checkTurnstile(app, req, opts.turnstileVerifyUrl)

    // Counted per login name whether or not it exists, so the lockout reveals nothing; while
    // locked, even the right password is refused.
    const key = failuresKey(username.trim())
    const ipKey = ipFailuresKey(req.ip)
    const [failures, ipFailures] = await app.redis.mget(key, ipKey)
    if (Number(failures ?? 0) >= MAX_FAILURES || Number(ipFailures ?? 0) >= MAX_FAILURES_PER_IP) {
      const [, , nameTtl, ipTtl] = (await app.redis.multi().set(ipKey, 0, 'EX', LOCKOUT_S, 'NX').incr(ipKey).ttl(key).ttl(ipKey).exec()) ?? []
      // Retry-After: when the later of the two locks (the name's, the address's) that hold ends.
      const locks = [Number(failures ?? 0) >= MAX_FAILURES ? Number(nameTtl?.[1]) : 0, Number(ipFailures ?? 0) >= MAX_FAILURES_PER_IP ? Number(ipTtl?.[1]) : 0]
      const wait = Math.min(LOCKOUT_S, Math.max(1, ...locks.filter((n) => Number.isFinite(n))))
      throw new ApiError(429, M.tooManyLoginAttempts, { minutes: LOCKOUT_S / 60 }, { 'retry-after': String(wait) })
    }
    const user = await findLiveUserByLogin(app.db, username.trim())
    const valid = await verifyPassword(user?.password_hash, password)
    if (user === undefined || !valid) {
      await app.redis.multi().incr(key).expire(key, LOCKOUT_S).set(ipKey, 0, 'EX', LOCKOUT_S, 'NX').incr(ipKey).exec()
      throw fail(M.loginFailed)
    }
    if (user.status !== 1) throw fail(M.userBanned)
    await app.redis.del(key)
    await app.startSession(req, reply, user)
    return ok(publicUser(user), req.t(user.password_is_default ? M.defaultPassword : M.loggedIn))
  })

  app.get('/logout', { config: { auth: 'public' } }, async (req, reply) => {
    await app.endSession(req, reply)
    return ok(null)
  })

  app.get('/self', { config: { auth: 'user' } }, async (req) => ok(publicUser(req.auth!.user)))

  // A personal access token for scripts: `Authorization: <token>` plus `New-Api-User`.
  app.get('/token', { config: { auth: 'user' } }, async (req) => {
    const token = randomBytes(24).toString('base64url')
    await updateUser(app.db, req.auth!.user.id, { access_token_hash: app.accessTokenHash(token) })
    return ok(token)
  })
}
export default routes
