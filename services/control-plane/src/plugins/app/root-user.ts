import { hash } from '@node-rs/argon2'
import { findDefaultPasswordUsernames, findUsersPresence, insertRootUserIfNone } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ROOT_QUOTA } from '../../services/setup.js'

/** The well-known first password: flagged, and the console warns on every page until it changes. */
export const DEFAULT_ROOT = { username: 'root', password: '123456' } as const

/**
 * Creates the super admin on first start, when the users table is empty and INITIAL_ROOT_PASSWORD
 * is set; INITIAL_ROOT_PASSWORD=123456 is the well-known default, flagged `password_is_default`.
 * Without it no account is made: the console's first-run setup (`/api/setup`) asks for one.
 * Every start warns while an account still has the default password: a replica restarted months
 * later says so again, not only the one that created the account.
 */
export default fp(async (app: FastifyInstance, opts: { initialPassword?: string | undefined }) => {
  if (opts.initialPassword !== undefined) {
    const created = await insertRootUserIfNone(app.db, {
      username: DEFAULT_ROOT.username,
      passwordHash: await hash(opts.initialPassword),
      quota: ROOT_QUOTA,
      passwordIsDefault: opts.initialPassword === DEFAULT_ROOT.password
    })
    if (created !== undefined) app.log.info({ username: created.username }, 'created the root account')
  } else if (!(await findUsersPresence(app.db)).any) {
    app.log.warn('no account yet: open the console to create the super admin (first-run setup), or set INITIAL_ROOT_PASSWORD')
  }
  const usernames = await findDefaultPasswordUsernames(app.db)
  if (usernames.length > 0) {
    app.log.warn({ usernames }, 'an account still uses the default password; change it in the console, or set INITIAL_ROOT_PASSWORD before the first start')
  }
}, { name: 'root-user', dependencies: ['db'] })
