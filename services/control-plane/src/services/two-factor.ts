import { createHash, randomBytes, randomInt } from 'node:crypto'
import {
  acceptTwoFactorStep,
  consumeBackupCode,
  findTwoFactor,
  findUserById,
  isTwoFactorEnabled,
  type PublicUser,
  type User
} from '@modelgate/db'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Secret, TOTP } from 'otpauth'
import { fail, ok } from '../lib/errors.js'
import { M } from '../lib/messages.js'
import { TM } from '../lib/two-factor-messages.js'
import type { Deps } from './deps.js'
import { clearLoginFailures } from './login-guard.js'
import { publicUser } from './users.js'

/** What authenticator apps use: RFC 6238 with a 30 s step, 6 digits, HMAC-SHA1. */
export const TOTP_PERIOD_S = 30
export const TOTP_DIGITS = 6
export const TOTP_ALGORITHM = 'SHA1'
/** Steps either side of the current one that are still accepted (clock drift, slow typing). */
export const TOTP_WINDOW = 1
export const BACKUP_CODE_COUNT = 10
/** How long the second step of a sign-in may wait for its code. */
export const FLOW_TTL_S = 5 * 60
export const flowKey = (token: string) => `login:2fa-flow:${token}`

export function totpOf (secretBase32: string, issuer = '', label = ''): TOTP {
  return new TOTP({ issuer, label, algorithm: TOTP_ALGORITHM, digits: TOTP_DIGITS, period: TOTP_PERIOD_S, secret: Secret.fromBase32(secretBase32) })
}

/** A new 160-bit secret, base32 (RFC 4226 recommends the hash's length). */
export function newTotpSecret (): string {
  return new Secret({ size: 20 }).base32
}

/** `otpauth://totp/<issuer>:<username>?secret=...&issuer=...` for the QR code. */
export function otpauthUri (secretBase32: string, issuer: string, username: string): string {
  return totpOf(secretBase32, issuer, username).toString()
}

/** The time-step a code belongs to (within the window around `nowMs`), or undefined when it matches none. */
export function matchingStep (secretBase32: string, code: string, nowMs = Date.now()): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined
  const delta = totpOf(secretBase32).validate({ token: code, timestamp: nowMs, window: TOTP_WINDOW })
  return delta === null ? undefined : Math.floor(nowMs / 1000 / TOTP_PERIOD_S) + delta
}

// No 0/o, 1/l/i: read off a screen or paper without doubt (31 characters).
const BACKUP_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'
const BACKUP_GROUPS = 4
const BACKUP_GROUP_LEN = 4

/** Ten fresh backup codes, `xxxx-xxxx-xxxx-xxxx` (about 79 bits each, so a plain SHA-256 is enough at rest). */
export function newBackupCodes (): string[] {
  return Array.from({ length: BACKUP_CODE_COUNT }, () =>
    Array.from({ length: BACKUP_GROUPS }, () => Array.from({ length: BACKUP_GROUP_LEN }, () => BACKUP_ALPHABET[randomInt(BACKUP_ALPHABET.length)]).join('')).join('-'))
}

/** A typed backup code without separators, spaces or case. */
export function normalizeBackupCode (code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '')
}

/** What is stored of a backup code: SHA-256 of the user id and the normalised code. */
export function backupCodeHash (userId: number, code: string): string {
  return createHash('sha256').update(`modelgate:2fa-backup:v1:${userId}:${normalizeBackupCode(code)}`).digest('hex')
}

export type SecondFactor = 'totp' | 'backup'

/**
 * Checks a code against the user's enabled second factor: six digits are a TOTP code (accepted
 * once: its time-step must be after the last accepted one), anything else a backup code (spent
 * on use) unless `allowBackup` is false. Undefined when it does not match.
 */
export async function verifySecondFactor ({ db, secrets, log }: Deps<'db' | 'secrets' | 'log'>, user: Pick<User, 'id'>, code: string, opts: { allowBackup?: boolean } = {}): Promise<SecondFactor | undefined> {
  const row = await findTwoFactor(db, user.id)
  if (row === undefined || !row.enabled) return undefined
  const typed = code.trim().replace(/\s/g, '')
  if (/^\d{6}$/.test(typed)) {
    let secret: string
    try {
      secret = secrets.open(row.secret_encrypted)
    } catch (err) {
      // Sealed under another CRYPTO_SECRET: only backup codes (hashes) still work, or an admin's reset.
      log.warn({ err, userId: user.id }, 'two-factor secret cannot be opened')
      return undefined
    }
    const step = matchingStep(secret, typed)
    return step !== undefined && await acceptTwoFactorStep(db, user.id, step) ? 'totp' : undefined
  }
  if (opts.allowBackup === false || normalizeBackupCode(typed).length !== BACKUP_GROUPS * BACKUP_GROUP_LEN) return undefined
  return await consumeBackupCode(db, user.id, backupCodeHash(user.id, typed)) ? 'backup' : undefined
}

/** A pending sign-in waiting for its second factor. */
interface Flow {
  uid: number
  /** The user's session version when the password was right: a change in between ends the flow. */
  sv: number
  /** The login name typed at the password step, whose lockout counter the code step shares. */
  login?: string
}

/** The answer of a password or OAuth step when the account has a second factor. */
export interface SecondStepAnswer { require_2fa: true, flow_token: string }

async function readFlow ({ redis }: Deps<'redis'>, token: string): Promise<Flow | undefined> {
  if (!/^[\w-]{20,128}$/.test(token)) return undefined
  const text = await redis.get(flowKey(token))
  if (text === null) return undefined
  try {
    const flow = JSON.parse(text) as Flow
    return typeof flow.uid === 'number' && typeof flow.sv === 'number' ? flow : undefined
  } catch {
    return undefined
  }
}

/**
 * The end of every successful sign-in (password, password + second factor, OAuth): starts the
 * session on this response and answers the user, warning one still on the default password.
 */
export async function finishSignIn ({ startSession }: Deps<'startSession'>, req: FastifyRequest, reply: FastifyReply, user: User): Promise<{ success: true, message: string, data: PublicUser }> {
  await startSession(req, reply, user)
  return ok(publicUser(user), req.t(user.password_is_default ? M.defaultPassword : M.loggedIn))
}

/**
 * After the first factor (a right password, an OAuth identity): an account with two-factor
 * sign-in gets a short-lived single-use flow token and no session; any other account is signed
 * in. `login` is the name typed at the password step (its failure counter is cleared only once
 * the sign-in is complete).
 */
export async function completeFirstFactor (
  deps: Deps<'db' | 'redis' | 'startSession'>,
  req: FastifyRequest,
  reply: FastifyReply,
  user: User,
  login?: string
): Promise<{ success: true, message: string, data: PublicUser | SecondStepAnswer }> {
  if (await isTwoFactorEnabled(deps.db, user.id)) {
    const token = randomBytes(24).toString('base64url')
    const flow: Flow = { uid: user.id, sv: user.session_version, ...(login !== undefined ? { login } : {}) }
    await deps.redis.set(flowKey(token), JSON.stringify(flow), 'EX', FLOW_TTL_S)
    return ok({ require_2fa: true, flow_token: token }, req.t(TM.loginNeeds2fa))
  }
  await clearLoginFailures(deps, [login])
  return await finishSignIn(deps, req, reply, user)
}

/** The flow of a second step: its user and the login names whose counters the step shares. */
export async function openFlow (deps: Deps<'db' | 'redis'>, token: string): Promise<{ user: User, logins: string[] }> {
  const flow = await readFlow(deps, token)
  const user = flow === undefined ? undefined : await findUserById(deps.db, flow.uid)
  if (flow === undefined || user === undefined || user.session_version !== flow.sv) throw fail(TM.flowExpired)
  return { user, logins: [...new Set([flow.login, user.username].filter((l): l is string => l !== undefined))] }
}

/** Spends the flow token; false when another request spent it first (or it expired meanwhile). */
export async function spendFlow ({ redis }: Deps<'redis'>, token: string, userId: number): Promise<boolean> {
  const text = await redis.getdel(flowKey(token))
  if (text === null) return false
  try {
    return (JSON.parse(text) as Flow).uid === userId
  } catch {
    return false
  }
}
