import { USER_STATUS } from '@modelgate/contracts'
import { randomBytes } from 'node:crypto'
import { findLiveUserByLogin, updateUser } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { fail, ok } from '../../../lib/errors.js'
import { M } from '../../../lib/messages.js'
import { TM } from '../../../lib/two-factor-messages.js'
import { checkTurnstile } from '../../../lib/turnstile.js'
import { clearLoginFailures, countLoginFailure, refuseWhileLocked } from '../../../services/login-guard.js'
import { completeFirstFactor, finishSignIn, openFlow, spendFlow, verifySecondFactor } from '../../../services/two-factor.js'
import { publicUser, verifyPassword } from '../../../services/users.js'

const routes: FastifyPluginAsyncTypebox<{ turnstileVerifyUrl: string }> = async (app, opts) => {
  const deps = { db: app.db, redis: app.redis, log: app.log, secrets: app.secrets, startSession: app.startSession }
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

    const login = username.trim()
    await refuseWhileLocked(deps, req, [login])
    const user = await findLiveUserByLogin(app.db, login)
    const valid = await verifyPassword(user?.password_hash, password)
    if (user === undefined || !valid) {
      await countLoginFailure(deps, req, [login])
      throw fail(M.loginFailed)
    }
    if (user.status !== USER_STATUS.enabled) throw fail(M.userBanned)
    // With two-factor sign-in: `{require_2fa, flow_token}` and no cookie until POST /login/2fa.
    return await completeFirstFactor(deps, req, reply, user, login)
  })

  // The second step of a sign-in: a TOTP or backup code for the flow token of the first step.
  // Wrong codes count toward the same lockout as wrong passwords.
  app.post('/login/2fa', {
    config: { auth: 'public', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: { body: Type.Object({ code: Type.String({ maxLength: 64 }), flow_token: Type.String({ maxLength: 128 }) }) }
  }, async (req, reply) => {
    const { user, logins } = await openFlow(deps, req.body.flow_token)
    await refuseWhileLocked(deps, req, logins)
    if (req.body.code.trim() === '') throw fail(TM.codeRequired)
    if (await verifySecondFactor(deps, user, req.body.code) === undefined) {
      await countLoginFailure(deps, req, logins)
      throw fail(TM.codeInvalid)
    }
    if (!await spendFlow(deps, req.body.flow_token, user.id)) throw fail(TM.flowExpired)
    if (user.status !== USER_STATUS.enabled) throw fail(M.userBanned)
    await clearLoginFailures(deps, logins)
    return await finishSignIn(deps, req, reply, user)
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
