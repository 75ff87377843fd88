import { findLiveUserBy, updateUser } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { AM } from '../../../lib/account-messages.js'
import { fail, ok } from '../../../lib/errors.js'
import { M } from '../../../lib/messages.js'
import { checkTurnstile } from '../../../lib/turnstile.js'
import { checkPassword, checkUsername, createAccount, hashPassword } from '../../../services/users.js'
import { checkEmailFormat, consumeEmailCode, consumeResetToken, normalizeEmail, randomPassword } from '../../../services/verification.js'

const routes: FastifyPluginAsyncTypebox<{ turnstileVerifyUrl: string }> = async (app, opts) => {
  const deps = { db: app.db, redis: app.redis, loadOptions: app.loadOptions }
  app.post('/register', {
    config: { auth: 'public', rateLimit: { max: 20, timeWindow: '20 minutes' } },
    schema: {
      querystring: Type.Object({ turnstile: Type.Optional(Type.String()) }),
      body: Type.Object({
        username: Type.String({ maxLength: 64 }),
        password: Type.String({ maxLength: 128 }),
        password2: Type.Optional(Type.String({ maxLength: 128 })),
        email: Type.Optional(Type.String({ maxLength: 254 })),
        verification_code: Type.Optional(Type.String({ maxLength: 32 })),
        aff_code: Type.Optional(Type.String({ maxLength: 64 }))
      })
    }
  }, async (req) => {
    const options = await app.loadOptions()
    if (!options.bool('RegisterEnabled')) throw fail(AM.registerDisabled)
    if (!options.bool('PasswordRegisterEnabled')) throw fail(AM.passwordRegisterDisabled)
    const { username, password, password2 } = req.body
    if (username === '' || password === '') throw fail(M.usernamePasswordEmpty)
    checkUsername(username)
    checkPassword(password)
    if (password2 !== undefined && password2 !== password) throw fail(AM.passwordsDiffer)
    await checkTurnstile(app, req, opts.turnstileVerifyUrl)

    // Without verification an address is unproven, so it is not stored (as in the peer gateways).
    let email: string | undefined
    if (options.bool('EmailVerificationEnabled')) {
      const code = req.body.verification_code?.trim() ?? ''
      email = normalizeEmail(req.body.email ?? '')
      if (email === '' || code === '') throw fail(AM.emailAndCodeRequired)
      checkEmailFormat(email)
      if (await findLiveUserBy(app.db, 'email', email) !== undefined) throw fail(AM.emailInUse)
      // Checked before the code is spent, so a taken name does not cost the user a new mail.
      if (await findLiveUserBy(app.db, 'username', username) !== undefined) throw fail(M.usernameTaken)
      if (!await consumeEmailCode(deps, email, code)) throw fail(AM.codeInvalid)
    }
    const affCode = req.body.aff_code?.trim()
    await createAccount(deps, { username, password, email, affCode: affCode === '' ? undefined : affCode })
    return ok(null, req.t(AM.registered))
  })

  app.post('/reset', {
    config: { auth: 'public', rateLimit: { max: 20, timeWindow: '20 minutes' } },
    schema: { body: Type.Object({ email: Type.String({ maxLength: 254 }), token: Type.String({ maxLength: 128 }) }) }
  }, async (req) => {
    const email = normalizeEmail(req.body.email)
    if (email === '' || !await consumeResetToken(deps, email, req.body.token)) throw fail(AM.resetInvalid)
    const user = await findLiveUserBy(app.db, 'email', email)
    if (user === undefined) throw fail(AM.resetInvalid)
    const password = randomPassword()
    // The version bump ends every session of the user, wherever it was opened.
    const updated = await updateUser(app.db, user.id, {
      password_hash: await hashPassword(password),
      password_is_default: false,
      session_version: user.session_version + 1
    })
    if (updated === undefined) throw fail(AM.resetInvalid)
    await app.publishChange({ kind: 'user', id: user.id })
    return ok(password, req.t(AM.passwordReset))
  })
}
export default routes
