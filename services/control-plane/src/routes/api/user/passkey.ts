import { PasskeyLoginBody, PasskeyRegisterBody, PasskeyRenameBody, PasskeyVerifyBody } from '@modelgate/contracts'
import { deletePasskey, deleteUserPasskeys, findUserById, renamePasskey } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import Type from 'typebox'
import { fail, forbidden, ok } from '../../../lib/errors.js'
import { M } from '../../../lib/messages.js'
import { PM } from '../../../lib/passkey-messages.js'
import { TM } from '../../../lib/two-factor-messages.js'
import { recordAudit } from '../../../services/audit.js'
import { refuseWhileLocked } from '../../../services/login-guard.js'
import {
  acceptVerification,
  finishLogin,
  finishRegistration,
  loginOptions,
  passkeyList,
  passkeyView,
  registrationOptions,
  verificationOptions
} from '../../../services/passkeys.js'
import { markVerified, requireFreshVerification, requireFreshVerificationIfVerifiable, verificationMethods } from '../../../services/secure-verify.js'
import { revokeSessions } from '../../../services/sessions.js'
import { finishSignIn } from '../../../services/two-factor.js'
import { outranks } from '../../../services/users.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

/**
 * Passkeys (WebAuthn) under /api/user/passkey, keeping new-api's routes: the caller's list,
 * registration, renaming and removal; passwordless sign-in; secure verification; and the
 * admin's reset under /api/user/:id/passkey.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, log: app.log, loadOptions: app.loadOptions, startSession: app.startSession }
  app.get('/passkey', { config: { auth: 'user' } }, async (req) => ok(await passkeyList(deps, req.auth!.user.id)))

  // A new sign-in credential: a stolen session alone must not add one, so it needs a fresh
  // verification (password, 2FA code or an existing passkey) like a password change.
  app.post('/passkey/register/begin', { config: { auth: 'user', rateLimit: { max: 30, timeWindow: '1 minute' } } }, async (req) => {
    await requireFreshVerificationIfVerifiable(deps, req)
    return ok({ options: await registrationOptions(deps, req) })
  })

  app.post('/passkey/register/finish', {
    config: { auth: 'user', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: { body: PasskeyRegisterBody }
  }, async (req) => {
    const saved = await finishRegistration(deps, req, req.body.response, req.body.name)
    return ok(passkeyView(saved), req.t(PM.registered))
  })

  app.put('/passkey/:id', { config: { auth: 'user' }, schema: { params: IdParams, body: PasskeyRenameBody } }, async (req) => {
    const name = req.body.name.trim()
    if (name === '') throw fail(M.invalidParameter)
    if (!await renamePasskey(app.db, req.auth!.user.id, req.params.id, name)) throw fail(PM.notFound)
    return ok(null, req.t(PM.renamed))
  })

  app.delete('/passkey/:id', { config: { auth: 'user' }, schema: { params: IdParams } }, async (req) => {
    await requireFreshVerification(deps, req)
    if (await deletePasskey(app.db, req.auth!.user.id, req.params.id) === undefined) throw fail(PM.notFound)
    return ok(null, req.t(PM.deleted))
  })

  // new-api's route (one passkey per account there): removes every passkey of the caller.
  app.delete('/passkey', { config: { auth: 'user' } }, async (req) => {
    await requireFreshVerification(deps, req)
    if (await deleteUserPasskeys(app.db, req.auth!.user.id) === 0) throw fail(PM.none)
    return ok(null, req.t(PM.deletedAll))
  })

  // Passwordless sign-in: no username; the passkey names the account. A complete sign-in (no
  // second step), counted toward the login lockout when refused.
  app.post('/passkey/login/begin', { config: { auth: 'public', rateLimit: { max: 30, timeWindow: '1 minute' } } }, async (req) => ok(await loginOptions(deps, req)))

  app.post('/passkey/login/finish', {
    config: { auth: 'public', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: { body: PasskeyLoginBody }
  }, async (req, reply) => {
    const user = await finishLogin(deps, req, req.body.flow_id, req.body.response)
    return await finishSignIn(deps, req, reply, user)
  })

  // Secure verification with a passkey: the same mark POST /api/verify sets.
  app.post('/passkey/verify/begin', { config: { auth: 'user', rateLimit: { max: 30, timeWindow: '1 minute' } } }, async (req) => ok({ options: await verificationOptions(deps, req) }))

  app.post('/passkey/verify/finish', {
    config: { auth: 'user', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: { body: PasskeyVerifyBody }
  }, async (req) => {
    const user = req.auth!.user
    await refuseWhileLocked(deps, req, [user.username])
    await acceptVerification(deps, req, req.body.response)
    const expiresAt = await markVerified(deps, req)
    return ok({ verified: true, expires_at: expiresAt, methods: await verificationMethods(deps, user) }, req.t(TM.verified))
  })

  app.get('/:id/passkey', { config: { auth: 'admin' }, schema: { params: IdParams } }, async (req) => {
    const target = await findUserById(app.db, req.params.id)
    if (target === undefined) throw fail(M.userNotFound)
    if (target.id !== req.auth!.user.id && !outranks(req.auth!.user, target)) throw forbidden(M.cannotManageSameOrHigher)
    return ok(await passkeyList(deps, target.id))
  })

  // For a user who lost a device (or whose passkey is in doubt): removes every passkey and ends
  // the user's sessions. Like every admin user action, only on users of a lower role.
  const reset = async (req: FastifyRequest<{ Params: { id: number } }>) => {
    const target = await findUserById(app.db, req.params.id)
    if (target === undefined) throw fail(M.userNotFound)
    if (!outranks(req.auth!.user, target)) throw forbidden(M.cannotManageSameOrHigher)
    const removed = await app.db.transaction().execute(async (trx) => {
      const n = await deleteUserPasskeys(trx, target.id)
      if (n > 0) {
        await recordAudit(deps, req, {
          action: 'passkey.reset',
          targetType: 'user',
          targetId: target.id,
          before: { passkey_count: n },
          after: { passkey_count: 0 },
          note: target.username
        }, trx)
      }
      return n
    })
    if (removed === 0) throw fail(PM.userHasNone)
    await revokeSessions(deps, target.id)
    await app.publishChange({ kind: 'user', id: target.id })
    return ok({ removed }, req.t(PM.resetDone))
  }
  app.delete('/:id/passkey', { config: { auth: 'admin' }, schema: { params: IdParams } }, reset)
  // new-api's name of the same reset.
  app.delete('/:id/reset_passkey', { config: { auth: 'admin' }, schema: { params: IdParams } }, reset)
}
export default routes
