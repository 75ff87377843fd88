import { findLiveUserBy } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { AM } from '../../../lib/account-messages.js'
import { fail, ok } from '../../../lib/errors.js'
import { checkTurnstile } from '../../../lib/turnstile.js'
import { checkEmailAllowed, checkEmailFormat, normalizeEmail, sendEmailCode, sendResetLink, skipResetLink } from '../../../services/verification.js'

/** Per IP, on top of the per-address resend cooldown: each call mails someone. */
const MAIL_RATE_LIMIT = { max: 20, timeWindow: '20 minutes' }

const EmailQuery = Type.Object({
  email: Type.String({ maxLength: 254 }),
  turnstile: Type.Optional(Type.String())
})

/** Routes that mail a secret to an address: GET /verification (a code) and GET /reset_password (a link). */
const routes: FastifyPluginAsyncTypebox<{ turnstileVerifyUrl: string }> = async (app, opts) => {
  const deps = { redis: app.redis, outbound: app.outbound, loadOptions: app.loadOptions }
  app.get('/verification', {
    config: { auth: 'public', rateLimit: MAIL_RATE_LIMIT },
    schema: { querystring: EmailQuery }
  }, async (req) => {
    const email = normalizeEmail(req.query.email)
    checkEmailFormat(email)
    checkEmailAllowed(await app.loadOptions(), email)
    await checkTurnstile(app, req, opts.turnstileVerifyUrl)
    if (await findLiveUserBy(app.db, 'email', email) !== undefined) throw fail(AM.emailInUse)
    await sendEmailCode(deps, req, email)
    return ok(null, req.t(AM.codeSent))
  })

  app.get('/reset_password', {
    config: { auth: 'public', rateLimit: MAIL_RATE_LIMIT },
    schema: { querystring: EmailQuery }
  }, async (req) => {
    const email = normalizeEmail(req.query.email)
    checkEmailFormat(email)
    await checkTurnstile(app, req, opts.turnstileVerifyUrl)
    // The link's host comes from ServerAddress. Without it, the request's Host header (which the
    // caller chooses) is trusted only on this machine; anywhere else a forged Host would send
    // the victim's reset token to the attacker.
    const serverAddress = (await app.loadOptions()).str('ServerAddress').trim().replace(/\/+$/, '')
    if (serverAddress === '' && !/^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/i.test(req.host)) throw fail(AM.serverAddressRequired)
    // The same answer (and cooldown) whether or not the address has an account, so this route
    // cannot be used to find out who is registered (SEC-02).
    if (await findLiveUserBy(app.db, 'email', email) === undefined) await skipResetLink(deps, req, email)
    else await sendResetLink(deps, req, email, serverAddress !== '' ? serverAddress : `${req.protocol}://${req.host}`)
    return ok(null, req.t(AM.resetMailSent))
  })
}
export default routes
