import { randomBytes } from 'node:crypto'
import { LOG_TYPE, type Role, ROLES } from '@modelgate/contracts'
import { hash, verify } from '@node-rs/argon2'
import {
  creditInviter,
  type Database,
  findLiveUserBy,
  insertLog,
  insertUser,
  type NewUser,
  type PublicUser,
  type Transaction,
  USER_PUBLIC_COLUMNS,
  type User
} from '@modelgate/db'
import { fail } from '../lib/errors.js'
import { M } from '../lib/messages.js'
import type { Deps } from './deps.js'

export const USERNAME_MAX = 12
export const PASSWORD_MIN = 8
export const PASSWORD_MAX = 20

export function checkPassword (password: string): void {
  if ([...password].length < PASSWORD_MIN || [...password].length > PASSWORD_MAX) throw fail(M.passwordLength)
}

export function checkUsername (username: string): void {
  const n = [...username].length
  if (n < 1 || n > USERNAME_MAX || username.trim() !== username) throw fail(M.usernameLength)
}

/** argon2id with the library's defaults (19 MiB, 2 passes). */
export async function hashPassword (password: string): Promise<string> {
  return await hash(password)
}

// Verified when the login name is unknown, so both answers take the same time.
let dummyHash: Promise<string> | undefined

/** Checks a password against a stored hash; an empty hash (OAuth-only account) never matches. */
export async function verifyPassword (stored: string | undefined, password: string): Promise<boolean> {
  if (stored === undefined || stored === '') {
    dummyHash ??= hash('not-a-real-password')
    await verify(await dummyHash, password).catch(() => false)
    return false
  }
  return await verify(stored, password).catch(() => false)
}

/** A user as the API shows it: no password or access-token hash. */
export function publicUser (user: User): PublicUser {
  const out: Record<string, unknown> = {}
  for (const col of USER_PUBLIC_COLUMNS) out[col] = user[col]
  return out as PublicUser
}

/** True when `actor` may read or change `target`: strictly higher role (or itself, for reading). */
export function outranks (actor: Pick<User, 'role'>, target: Pick<User, 'role'>): boolean {
  return actor.role > target.role
}

export function isUniqueViolation (err: unknown, constraint?: string): boolean {
  const e = err as { code?: string, constraint?: string }
  return e.code === '23505' && (constraint === undefined || e.constraint === constraint)
}

/** Fields of a new account; at least one way to sign in (password or a binding). */
export interface NewAccount {
  username: string
  password?: string
  displayName?: string
  email?: string
  github_id?: string
  linuxdo_id?: string
  wechat_id?: string
  telegram_id?: string
  /** The inviter's aff_code, when the user came through an invite link. */
  affCode?: string
  /** A ROLES value (the admin route's schema allows common and admin only); common when absent. */
  role?: number
  /** Runs in the account's transaction once the row exists (a custom provider's binding). */
  within?: (trx: Transaction<Database>, user: User) => Promise<void>
}

/**
 * Creates an account with the new-user quota, and when `affCode` names a live user, credits the
 * invitee (QuotaForInvitee) and the inviter (QuotaForInviter, aff_count + 1) in the same
 * transaction: a failed or duplicate registration credits nobody.
 */
export async function createAccount ({ db, loadOptions }: Deps<'db' | 'loadOptions'>, account: NewAccount): Promise<User> {
  checkUsername(account.username)
  if (account.password !== undefined) checkPassword(account.password)
  const options = await loadOptions()
  const inviter = account.affCode !== undefined && account.affCode !== '' ? await findLiveUserBy(db, 'aff_code', account.affCode) : undefined
  const forNewUser = Math.max(0, Math.trunc(options.num('QuotaForNewUser')))
  const forInvitee = inviter === undefined ? 0 : Math.max(0, Math.trunc(options.num('QuotaForInvitee')))
  const forInviter = inviter === undefined ? 0 : Math.max(0, Math.trunc(options.num('QuotaForInviter')))
  const row: NewUser = {
    username: account.username,
    display_name: account.displayName ?? account.username,
    password_hash: account.password === undefined ? '' : await hashPassword(account.password),
    email: account.email ?? '',
    github_id: account.github_id ?? '',
    linuxdo_id: account.linuxdo_id ?? '',
    wechat_id: account.wechat_id ?? '',
    telegram_id: account.telegram_id ?? '',
    role: (account.role ?? ROLES.common) as Role,
    quota: forNewUser + forInvitee,
    inviter_id: inviter?.id ?? 0,
    access_token_hash: null,
    aff_code: null,
    deleted_at: null,
    setting: {}
  }
  try {
    return await db.transaction().execute(async (trx) => {
      const user = await insertUser(trx, row)
      if (account.within !== undefined) await account.within(trx, user)
      if (inviter !== undefined) await creditInviter(trx, inviter.id, forInviter)
      if (user.quota > 0) {
        await insertLog(trx, {
          type: LOG_TYPE.system,
          user_id: user.id,
          username: user.username,
          quota: user.quota,
          content: inviter === undefined
            ? `new user bonus: ${user.quota} quota`
            : `new user bonus: ${forNewUser} quota, invitee bonus: ${forInvitee} quota (invited by user ${inviter.id})`
        })
      }
      return user
    })
  } catch (err) {
    if (isUniqueViolation(err, 'users_username_live')) throw fail(M.usernameTaken)
    if (isUniqueViolation(err, 'users_email_live')) throw fail(M.emailInUse)
    if (isUniqueViolation(err)) throw fail(M.accountAlreadyBound)
    throw err
  }
}

/** The user's invite code, created on first use (8 letters and digits, unique). */
export async function ensureAffCode ({ db }: Deps<'db'>, user: User): Promise<string> {
  if (user.aff_code !== null) return user.aff_code
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789'
  for (let attempt = 0; attempt < 5; attempt++) {
    const code = [...randomBytes(8)].map((b) => alphabet[b % alphabet.length]).join('')
    try {
      const updated = await db.updateTable('users').set({ aff_code: code }).where('id', '=', user.id).where('aff_code', 'is', null)
        .returning('aff_code').executeTakeFirst()
      if (updated?.aff_code != null) return updated.aff_code
      // Another request set it first: use theirs.
      const again = await db.selectFrom('users').select('aff_code').where('id', '=', user.id).executeTakeFirstOrThrow()
      if (again.aff_code !== null) return again.aff_code
    } catch (err) {
      if (!isUniqueViolation(err)) throw err
    }
  }
  throw new Error('could not allocate an invite code')
}
