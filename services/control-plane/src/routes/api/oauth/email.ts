import { findLiveUserBy, updateUser } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { AM } from '../../../lib/account-messages.js'
import { fail, ok } from '../../../lib/errors.js'
import { M } from '../../../lib/messages.js'
import { checkEmailFormat, consumeEmailCode, normalizeEmail } from '../../../services/verification.js'
import { publicUser } from '../../../services/users.js'
import { requireFreshVerificationIfVerifiable } from '../../../services/secure-verify.js'

/** GET /oauth/email/bind: sets the caller's e-mail after proving it with a code from GET /verification. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, loadOptions: app.loadOptions }
  app.get('/bind', {
    config: { auth: 'user', rateLimit: { max: 20, timeWindow: '20 minutes' } },
    schema: { querystring: Type.Object({ email: Type.String({ maxLength: 254 }), code: Type.String({ maxLength: 32 }) }) }
  }, async (req) => {
    const user = req.auth!.user
    const email = normalizeEmail(req.query.email)
    const code = req.query.code.trim()
    if (email === '' || code === '') throw fail(AM.emailAndCodeRequired)
    // Before the code is spent, so the console can verify and repeat the same call.
    await requireFreshVerificationIfVerifiable(deps, req)
    checkEmailFormat(email)
    const holder = await findLiveUserBy(app.db, 'email', email)
    if (holder !== undefined && holder.id !== user.id) throw fail(AM.emailInUse)
    if (!await consumeEmailCode(deps, email, code)) throw fail(AM.codeInvalid)
    const updated = await updateUser(app.db, user.id, { email })
    if (updated === undefined) throw fail(M.userNotFound)
    await app.publishChange({ kind: 'user', id: user.id })
    return ok(publicUser(updated), req.t(AM.emailBound))
  })
}
export default routes
