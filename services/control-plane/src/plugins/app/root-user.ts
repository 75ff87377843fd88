import { hash } from '@node-rs/argon2'
import { insertRootUserIfNone } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** The first account; the console warns on every login until this password changes. */
export const DEFAULT_ROOT = { username: 'root', password: '123456' } as const

/** Creates the super admin on first start, when the users table is empty. */
export default fp(async (app: FastifyInstance) => {
  const created = await insertRootUserIfNone(app.db, {
    username: DEFAULT_ROOT.username,
    passwordHash: await hash(DEFAULT_ROOT.password),
    quota: 100_000_000
  })
  if (created !== undefined) {
    app.log.warn({ username: created.username }, 'created the root account with the default password; change it in the console')
  }
}, { name: 'root-user', dependencies: ['db'] })
