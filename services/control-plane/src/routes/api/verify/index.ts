import { VerifyBody } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { fail, ok } from '../../../lib/errors.js'
import { TM } from '../../../lib/two-factor-messages.js'
import { countLoginFailure, refuseWhileLocked } from '../../../services/login-guard.js'
import { acceptVerification } from '../../../services/passkeys.js'
import { markVerified, verificationMethods, verificationStatus } from '../../../services/secure-verify.js'
import { verifySecondFactor } from '../../../services/two-factor.js'
import { verifyPassword } from '../../../services/users.js'

/** The methods the user can verify with: a password when the account has one, 2FA when enabled, a passkey (services/secure-verify.ts). */
const methodsOf = verificationMethods

/**
 * Secure verification: proving the session's user again (password, 2FA code or passkey) before a
 * sensitive operation. A success marks the session verified for five minutes
 * (services/secure-verify.ts); wrong answers count toward the sign-in lockout.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, log: app.log, secrets: app.secrets, loadOptions: app.loadOptions }
  app.post('/', {
    config: { auth: 'user', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: { body: VerifyBody }
  }, async (req) => {
    const user = req.auth!.user
    const { method } = req.body
    if (!(await methodsOf(deps, user)).includes(method)) throw fail(TM.verifyMethodUnavailable)
    await refuseWhileLocked(deps, req, [user.username])
    if (req.body.method === 'passkey') {
      // The assertion answers the challenge of POST /api/user/passkey/verify/begin; a refusal counts toward the lockout there.
      await acceptVerification(deps, req, req.body.response)
      return ok({ verified: true, expires_at: await markVerified(deps, req), methods: await methodsOf(deps, user) }, req.t(TM.verified))
    }
    const value = req.body.value
    const right = method === 'password'
      ? await verifyPassword(user.password_hash, value)
      : value.trim() !== '' && await verifySecondFactor(deps, user, value) !== undefined
    if (!right) {
      await countLoginFailure(deps, req, [user.username])
      throw fail(method === 'password' ? TM.verifyWrongPassword : TM.codeInvalid)
    }
    const expiresAt = await markVerified(deps, req)
    return ok({ verified: true, expires_at: expiresAt, methods: await methodsOf(deps, user) }, req.t(TM.verified))
  })

  app.get('/status', { config: { auth: 'user' } }, async (req) => {
    const [status, methods] = await Promise.all([verificationStatus(deps, req), methodsOf(deps, req.auth!.user)])
    return ok({ ...status, methods })
  })
}
export default routes
