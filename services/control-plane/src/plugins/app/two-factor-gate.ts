import { ROLES } from '@modelgate/contracts'
import { isTwoFactorEnabled } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../../lib/errors.js'
import { TM } from '../../lib/two-factor-messages.js'

/** What an admin without 2FA may still call while TwoFactorRequiredForAdmins is on: set it up, read self and status, sign out. */
const SETUP_ROUTES: ReadonlySet<string> = new Set([
  'GET /api/user/self',
  'GET /api/user/logout',
  'GET /api/user/2fa/status',
  'POST /api/user/2fa/setup',
  'POST /api/user/2fa/enable',
  'GET /api/verify/status'
])

/** The machine-readable flag of the refusal: the console opens its 2FA setup screen. */
export const SETUP_REQUIRED_DATA = { require_2fa_setup: true } as const

/**
 * With the option TwoFactorRequiredForAdmins on, an admin or root without an enabled second
 * factor gets 403 `data.require_2fa_setup` on every authenticated console call but those above.
 * Runs after the auth plugin's hook, which has set `req.auth`.
 */
export default fp(async (app: FastifyInstance) => {
  app.addHook('onRequest', async (req) => {
    const auth = req.auth
    if (auth === null || auth.user.role < ROLES.admin) return
    if (SETUP_ROUTES.has(`${req.method} ${req.routeOptions.url ?? ''}`)) return
    if (!(await app.loadOptions()).bool('TwoFactorRequiredForAdmins')) return
    if (await isTwoFactorEnabled(app.db, auth.user.id)) return
    throw new ApiError(403, TM.setupRequired, {}, undefined, { ...SETUP_REQUIRED_DATA })
  })
}, { name: 'two-factor-gate', dependencies: ['auth', 'options'] })
