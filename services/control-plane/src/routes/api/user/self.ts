import { ROLES } from '@modelgate/contracts'
import { findModelsForGroup, softDeleteUser, transferAffQuota, updateUser, type UserUpdate } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { fail, ok } from '../../../lib/errors.js'
import { M } from '../../../lib/messages.js'
import { checkPassword, ensureAffCode, hashPassword, publicUser, verifyPassword } from '../../../services/users.js'
import { usableGroups } from '../../../services/groups.js'
import { revokeSessions } from '../../../services/sessions.js'
import { requireFreshVerificationIfVerifiable } from '../../../services/secure-verify.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, loadOptions: app.loadOptions }
  app.put('/self', {
    config: { auth: 'user' },
    schema: {
      body: Type.Object({
        display_name: Type.Optional(Type.String({ maxLength: 64 })),
        password: Type.Optional(Type.String({ maxLength: 64 })),
        original_password: Type.Optional(Type.String({ maxLength: 128 }))
      }, { additionalProperties: true })
    }
  }, async (req, reply) => {
    const user = req.auth!.user
    const patch: UserUpdate = {}
    if (req.body.display_name !== undefined) patch.display_name = req.body.display_name.trim() || user.username
    const changingPassword = req.body.password !== undefined && req.body.password !== ''
    if (changingPassword) {
      checkPassword(req.body.password!)
      await requireFreshVerificationIfVerifiable(deps, req)
      // Accounts made through OAuth have no password yet and may set one directly.
      if (user.password_hash !== '' && !await verifyPassword(user.password_hash, req.body.original_password ?? '')) {
        throw fail(M.wrongOriginalPassword)
      }
      patch.password_hash = await hashPassword(req.body.password!)
      patch.password_is_default = false
      patch.session_version = user.session_version + 1
    }
    const updated = Object.keys(patch).length > 0 ? await updateUser(app.db, user.id, patch) : user
    if (updated === undefined) throw fail(M.userNotFound)
    if (changingPassword) {
      // Every other session ended with the version bump (their rows are marked too, and the
      // gateway told); this one goes on under the new version on a fresh cookie.
      const jti = req.auth!.session?.jti
      await revokeSessions(deps, user.id, jti === undefined ? {} : { except: jti })
      if (jti !== undefined) await app.renewSession(req, reply, updated)
      await app.publishChange({ kind: 'user', id: user.id })
    }
    return ok(publicUser(updated), req.t(changingPassword ? M.passwordChanged : M.userUpdated))
  })

  app.delete('/self', { config: { auth: 'user' } }, async (req, reply) => {
    const user = req.auth!.user
    if (user.role >= ROLES.root) throw fail(M.cannotDeleteRootSelf)
    await softDeleteUser(app.db, user.id)
    await app.publishChange({ kind: 'user', id: user.id })
    await app.endSession(req, reply)
    return ok(null, req.t(M.accountDeleted))
  })

  app.get('/aff', { config: { auth: 'user' } }, async (req) => ok(await ensureAffCode(deps, req.auth!.user)))

  app.post('/aff_transfer', {
    config: { auth: 'user' },
    schema: { body: Type.Object({ quota: Type.Integer() }) }
  }, async (req) => {
    const min = Math.trunc((await app.loadOptions()).num('QuotaPerUnit'))
    if (req.body.quota < min) throw fail(M.affTransferTooSmall, { min })
    const updated = await transferAffQuota(app.db, req.auth!.user.id, req.body.quota)
    if (updated === undefined) throw fail(M.affQuotaShort)
    await app.quota.adjust('user', updated.id, req.body.quota)
    await app.publishChange({ kind: 'user', id: updated.id })
    return ok({ quota: updated.quota, aff_quota: updated.aff_quota })
  })

  app.get('/models', { config: { auth: 'user' } }, async (req) => ok(await findModelsForGroup(app.db, req.auth!.user.group)))

  app.get('/self/groups', { config: { auth: 'user' } }, async (req) => ok(usableGroups(await app.loadOptions(), req.auth!.user.group)))
}
export default routes
