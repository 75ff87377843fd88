import {
  countBackupCodesRemaining,
  countTwoFactorUsers,
  deleteTwoFactor,
  findTwoFactor,
  findUserById,
  replaceBackupCodes,
  savePendingTwoFactor,
  acceptTwoFactorStep
} from '@modelgate/db'
import { TwoFactorCodeBody, ROLES } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import Type from 'typebox'
import { fail, forbidden, ok } from '../../../lib/errors.js'
import { M } from '../../../lib/messages.js'
import { TM } from '../../../lib/two-factor-messages.js'
import { recordAudit } from '../../../services/audit.js'
import { countLoginFailure, isLoginLocked, refuseWhileLocked } from '../../../services/login-guard.js'
import { requireFreshVerification } from '../../../services/secure-verify.js'
import { revokeSessions } from '../../../services/sessions.js'
import { backupCodeHash, matchingStep, newBackupCodes, newTotpSecret, otpauthUri, verifySecondFactor } from '../../../services/two-factor.js'
import { outranks } from '../../../services/users.js'

/** Two-factor sign-in (TOTP) under /api/user/2fa, and the admin's reset under /api/user/:id/2fa. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, log: app.log, secrets: app.secrets }
  app.get('/2fa/status', { config: { auth: 'user' } }, async (req) => {
    const user = req.auth!.user
    const [row, remaining, locked, options] = await Promise.all([
      findTwoFactor(app.db, user.id),
      countBackupCodesRemaining(app.db, user.id),
      isLoginLocked(deps, user.username),
      app.loadOptions()
    ])
    const enabled = row?.enabled === true
    return ok({
      enabled,
      pending: row !== undefined && !enabled,
      locked,
      backup_codes_remaining: enabled ? remaining : 0,
      setup_required: !enabled && user.role >= ROLES.admin && options.bool('TwoFactorRequiredForAdmins')
    })
  })

  // A new pending secret and backup codes (shown once); the factor is on only after /2fa/enable.
  app.post('/2fa/setup', { config: { auth: 'user' } }, async (req) => {
    const user = req.auth!.user
    const secret = newTotpSecret()
    const codes = newBackupCodes()
    const saved = await savePendingTwoFactor(app.db, user.id, app.secrets.seal(secret), codes.map((c) => backupCodeHash(user.id, c)))
    if (!saved) throw fail(TM.alreadyEnabled)
    const issuer = (await app.loadOptions()).str('SystemName').trim() || 'ModelGate'
    return ok({ secret, qr_code_data: otpauthUri(secret, issuer, user.username), backup_codes: codes })
  })

  app.post('/2fa/enable', { config: { auth: 'user' }, schema: { body: TwoFactorCodeBody } }, async (req) => {
    const user = req.auth!.user
    const row = await findTwoFactor(app.db, user.id)
    if (row === undefined) throw fail(TM.setupFirst)
    if (row.enabled) throw fail(TM.alreadyEnabled)
    const step = matchingStep(app.secrets.open(row.secret_encrypted), req.body.code.trim())
    if (step === undefined || !await acceptTwoFactorStep(app.db, user.id, step, { enable: true })) throw fail(TM.codeInvalid)
    return ok({ enabled: true }, req.t(TM.enabled))
  })

  /**
   * The caller's 2FA is on and `code` (a TOTP or a backup code) is theirs; a wrong code counts
   * toward the sign-in lockout, and a locked account is refused before any code is tried.
   */
  const requireOwnCode = async (req: FastifyRequest, code: string): Promise<void> => {
    const user = req.auth!.user
    const row = await findTwoFactor(app.db, user.id)
    if (row?.enabled !== true) throw fail(TM.notEnabled)
    await refuseWhileLocked(deps, req, [user.username])
    if (await verifySecondFactor(deps, user, code) === undefined) {
      await countLoginFailure(deps, req, [user.username])
      throw fail(TM.codeInvalid)
    }
  }

  // Needs a fresh secure verification as well as a code: a stolen session alone cannot turn it off.
  app.post('/2fa/disable', { config: { auth: 'user' }, schema: { body: TwoFactorCodeBody } }, async (req) => {
    const user = req.auth!.user
    await requireFreshVerification(deps, req)
    await requireOwnCode(req, req.body.code)
    await app.db.transaction().execute(async (trx) => { await deleteTwoFactor(trx, user.id) })
    return ok({ enabled: false }, req.t(TM.disabled))
  })

  app.post('/2fa/backup_codes', { config: { auth: 'user' }, schema: { body: TwoFactorCodeBody } }, async (req) => {
    const user = req.auth!.user
    await requireOwnCode(req, req.body.code)
    const codes = newBackupCodes()
    await replaceBackupCodes(app.db, user.id, codes.map((c) => backupCodeHash(user.id, c)))
    return ok({ backup_codes: codes }, req.t(TM.backupCodesRegenerated))
  })

  app.get('/2fa/stats', { config: { auth: 'admin' } }, async () => {
    const { total, enabled } = await countTwoFactorUsers(app.db)
    return ok({ total_users: total, enabled_users: enabled, enabled_rate: total === 0 ? 0 : Math.round(enabled / total * 1000) / 10 })
  })

  // For a user who lost the authenticator and the backup codes: removes the factor and ends the
  // user's sessions. Like every admin user action, only on users of a lower role.
  app.delete('/:id/2fa', {
    config: { auth: 'admin' },
    schema: { params: Type.Object({ id: Type.Integer({ minimum: 1 }) }) }
  }, async (req) => {
    const target = await findUserById(app.db, req.params.id)
    if (target === undefined) throw fail(M.userNotFound)
    if (!outranks(req.auth!.user, target)) throw forbidden(M.cannotManageSameOrHigher)
    const row = await findTwoFactor(app.db, target.id)
    if (row?.enabled !== true) throw fail(TM.notEnabled)
    await app.db.transaction().execute(async (trx) => {
      await deleteTwoFactor(trx, target.id)
      await recordAudit(deps, req, {
        action: '2fa.reset',
        targetType: 'user',
        targetId: target.id,
        before: { two_fa_enabled: true },
        after: { two_fa_enabled: false },
        note: target.username
      }, trx)
    })
    await revokeSessions(deps, target.id)
    await app.publishChange({ kind: 'user', id: target.id })
    return ok(null, req.t(TM.resetDone))
  })
}
export default routes
