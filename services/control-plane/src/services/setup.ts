import type { SetupBody, SetupStatus } from '@modelgate/contracts'
import { findUsersPresence, insertRootUserIfNone, type User } from '@modelgate/db'
import { AM } from '../lib/account-messages.js'
import { fail } from '../lib/errors.js'
import { M } from '../lib/messages.js'
import { SM } from '../lib/setup-messages.js'
import type { Deps } from './deps.js'
import { checkPassword, checkUsername, hashPassword } from './users.js'

/** The super admin's starting balance, as the root account created at start gets. */
export const ROOT_QUOTA = 100_000_000

/** Whether setup is done: done once any account exists. */
export async function setupStatus (deps: Deps<'db'>): Promise<SetupStatus> {
  const users = await findUsersPresence(deps.db)
  return { status: users.any, root_init: users.root, database_type: 'postgres' }
}

/**
 * Creates the super admin from the first-run form, on an empty database only. Checked as
 * registration checks; the insert itself refuses when any account exists, so of concurrent
 * requests exactly one creates an account.
 */
export async function completeSetup (deps: Deps<'db'>, body: SetupBody): Promise<User> {
  if ((await findUsersPresence(deps.db)).any) throw fail(SM.alreadySetUp)
  const { username, password, confirmPassword } = body
  if (username === '' || password === '') throw fail(M.usernamePasswordEmpty)
  checkUsername(username)
  checkPassword(password)
  if (confirmPassword !== password) throw fail(AM.passwordsDiffer)
  const created = await insertRootUserIfNone(deps.db, { username, passwordHash: await hashPassword(password), quota: ROOT_QUOTA, passwordIsDefault: false })
  if (created === undefined) throw fail(SM.alreadySetUp)
  return created
}
