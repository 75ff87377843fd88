import type { VerifyMethod } from '@modelgate/contracts'
import { hasPasskeys, isTwoFactorEnabled, type User } from '@modelgate/db'
import type { FastifyRequest } from 'fastify'
import { ApiError, unauthorized } from '../lib/errors.js'
import { M } from '../lib/messages.js'
import { TM } from '../lib/two-factor-messages.js'
import type { Deps } from './deps.js'

/** How long one verification (POST /api/verify) lets sensitive operations through. */
export const VERIFICATION_TTL_S = 5 * 60

/** The machine-readable flag of a refusal for want of verification: the console opens its verification dialog. */
export const VERIFICATION_REQUIRED_DATA = { require_verification: true } as const

/**
 * What a verification belongs to: the session's token id (the JWT's jti), so signing in again or
 * on another device starts unverified; for a personal access token, that token (its stored hash,
 * which changes when it is regenerated).
 */
export function verificationSubject (req: FastifyRequest): string {
  const auth = req.auth
  if (auth === null) throw unauthorized(M.notLoggedIn)
  if (auth.session !== undefined) return `jti:${auth.session.jti}`
  return `token:${auth.user.id}:${auth.user.access_token_hash ?? ''}`
}

export const verificationKey = (subject: string): string => `secure-verify:${subject}`

/** Marks the caller's session verified for {@link VERIFICATION_TTL_S}; returns the expiry in unix seconds. */
export async function markVerified ({ redis }: Deps<'redis'>, req: FastifyRequest): Promise<number> {
  const expiresAt = Math.floor(Date.now() / 1000) + VERIFICATION_TTL_S
  // The value repeats the expiry so the check does not depend on Redis expiring on time.
  await redis.set(verificationKey(verificationSubject(req)), `${req.auth!.user.id}:${expiresAt}`, 'EX', VERIFICATION_TTL_S)
  return expiresAt
}

/** Whether the caller's session is verified now, and until when (unix seconds). */
export async function verificationStatus ({ redis }: Deps<'redis'>, req: FastifyRequest): Promise<{ verified: boolean, expires_at: number }> {
  const value = await redis.get(verificationKey(verificationSubject(req)))
  const [uid, expiresAt] = (value ?? '').split(':').map(Number)
  const now = Math.floor(Date.now() / 1000)
  if (uid !== req.auth!.user.id || expiresAt === undefined || !Number.isFinite(expiresAt) || expiresAt <= now) return { verified: false, expires_at: 0 }
  return { verified: true, expires_at: expiresAt }
}

/** Ends the caller's verification (after the operation it allowed changed what it is verified against). */
export async function clearVerification ({ redis }: Deps<'redis'>, req: FastifyRequest): Promise<void> {
  await redis.del(verificationKey(verificationSubject(req)))
}

/**
 * Refuses a sensitive operation unless the caller's session was verified (password or 2FA code
 * through POST /api/verify) within the last five minutes: 403 with
 * `data.require_verification: true`, which the console answers with its verification dialog
 * and then repeats the call.
 */
export async function requireFreshVerification (deps: Deps<'redis'>, req: FastifyRequest): Promise<void> {
  const { verified } = await verificationStatus(deps, req)
  if (!verified) throw new ApiError(403, TM.verificationRequired, {}, undefined, { ...VERIFICATION_REQUIRED_DATA })
}

/**
 * {@link requireFreshVerification} for an account that has something to verify with (a password,
 * 2FA or a passkey); one with none (made through OAuth, no password set yet) has only its session and
 * passes, so it can still set its first password.
 */
export async function requireFreshVerificationIfVerifiable (deps: Deps<'db' | 'redis' | 'loadOptions'>, req: FastifyRequest): Promise<void> {
  const user = req.auth?.user
  if (user !== undefined && (await verificationMethods(deps, user)).length === 0) return
  await requireFreshVerification(deps, req)
}

/**
 * The methods the user can verify with now: a password when the account has one, 2FA when
 * enabled, a passkey when passkeys are on (PasskeyEnabled) and the user has one.
 */
export async function verificationMethods ({ db, loadOptions }: Deps<'db' | 'loadOptions'>, user: Pick<User, 'id' | 'password_hash'>): Promise<VerifyMethod[]> {
  const methods: VerifyMethod[] = []
  if (user.password_hash !== '') methods.push('password')
  if (await isTwoFactorEnabled(db, user.id)) methods.push('2fa')
  if ((await loadOptions()).bool('PasskeyEnabled') && await hasPasskeys(db, user.id)) methods.push('passkey')
  return methods
}
