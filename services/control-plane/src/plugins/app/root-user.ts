import { hash } from '@node-rs/argon2'
import { findDefaultPasswordUsernames, insertRootUserIfNone } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** The first account; the console warns on every page until this password changes. */
export const DEFAULT_ROOT = { username: 'root', password: '123456' } as const

/**
 * Creates the super admin on first start, when the users table is empty, with
 * INITIAL_ROOT_PASSWORD or else the well-known default (flagged `password_is_default`).
 * Every start warns while an account still has the default password: a replica restarted months
 * later says so again, not only the one that created the account.
 */
export default fp(async (app: FastifyInstance, opts: { initialPassword?: string | undefined }) => {
  const created = await insertRootUserIfNone(app.db, {
    username: DEFAULT_ROOT.username,
    passwordHash: await hash(opts.initialPassword ?? DEFAULT_ROOT.password),
    quota: 100_000_000,
    passwordIsDefault: opts.initialPassword === undefined
  })
  if (created !== undefined) app.log.info({ username: created.username }, 'created the root account')
  const usernames = await findDefaultPasswordUsernames(app.db)
  if (usernames.length > 0) {
    app.log.warn({ usernames }, 'an account still uses the default password; change it in the console, or set INITIAL_ROOT_PASSWORD before the first start')
  }
}, { name: 'root-user', dependencies: ['db'] })
