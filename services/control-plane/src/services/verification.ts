import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto'
import type { OptionValues } from '@modelgate/contracts'
import { MailNotConfiguredError, sendMail, smtpSettingsFrom } from '@modelgate/mail'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AM } from '../lib/account-messages.js'
import { fail } from '../lib/errors.js'
import type { Msg } from '../lib/i18n.js'

/** E-mail codes are valid for 3 minutes (SPEC.md section 9). */
export const CODE_TTL_S = 3 * 60
/** Another code or reset mail to the same address is refused for 30 seconds (SPEC.md section 4). */
export const RESEND_COOLDOWN_S = 30
/** Wrong guesses that burn a code: 5 tries at 1 in a million each cannot brute force it. */
export const MAX_CODE_ATTEMPTS = 5
// No option sets the reset link's lifetime (SPEC.md section 9 leaves the value open): 15 minutes.
export const RESET_TTL_S = 15 * 60

/** `email`: codes for registration and binding; `reset`: password-reset tokens. */
export type VerifyPurpose = 'email' | 'reset'
export const verifyKey = (purpose: VerifyPurpose, email: string) => `verify:${purpose}:${email}`
export const cooldownKey = (purpose: VerifyPurpose, email: string) => `verify:cooldown:${purpose}:${email}`

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** Equal-length hex digests compared without an early exit. */
function digestsEqual (a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

// A wrong guess counts against the code; the last allowed one deletes it. EXISTS first, so a
// guess at an expired code does not leave a counter behind without a TTL.
const COUNT_WRONG_GUESS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if n >= tonumber(ARGV[1]) then redis.call('DEL', KEYS[1]) end
return n
`

// Anything a mail header could misread (commas, angle brackets, spaces) is outside this pattern.
const EMAIL_PATTERN = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/

/** Addresses are compared and stored trimmed and in lower case. */
export function normalizeEmail (raw: string): string {
  return raw.trim().toLowerCase()
}

export function checkEmailFormat (email: string): void {
  if (email.length > 254 || !EMAIL_PATTERN.test(email)) throw fail(AM.emailInvalid)
}

/** EmailDomainWhitelist (when EmailDomainRestrictionEnabled) and the `+` alias ban (EmailAliasRestrictionEnabled). */
export function checkEmailAllowed (options: OptionValues, email: string): void {
  const at = email.lastIndexOf('@')
  const local = email.slice(0, at)
  const domain = email.slice(at + 1)
  if (options.bool('EmailDomainRestrictionEnabled')) {
    const allowed = options.str('EmailDomainWhitelist').split(',').map((d) => d.trim().toLowerCase()).filter((d) => d !== '')
    if (!allowed.includes(domain)) throw fail(AM.emailDomainNotAllowed, { domain })
  }
  if (options.bool('EmailAliasRestrictionEnabled') && local.includes('+')) throw fail(AM.emailAliasNotAllowed)
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Mails `to` in the request's language; SMTP trouble becomes a console message. */
async function mailTo (app: FastifyInstance, req: FastifyRequest, to: string, msgs: { subject: Msg, text: Msg, html: Msg }, vars: Record<string, string | number>): Promise<void> {
  const options = await app.loadOptions()
  const system = options.str('SystemName')
  const all = { ...vars, system }
  const escaped = Object.fromEntries(Object.entries(all).map(([k, v]) => [k, escapeHtml(String(v))]))
  try {
    await sendMail(smtpSettingsFrom(options), {
      to,
      subject: req.t(msgs.subject, all),
      text: req.t(msgs.text, all),
      html: req.t(msgs.html, escaped),
      fromName: system
    })
  } catch (err) {
    if (err instanceof MailNotConfiguredError) throw fail(AM.smtpNotConfigured)
    req.log.error({ err }, 'sending mail failed')
    throw fail(AM.mailFailed)
  }
}

/** Claims the right to mail `email` now; refused, with the seconds left, within the cooldown. */
async function claimSendSlot (app: FastifyInstance, purpose: VerifyPurpose, email: string): Promise<void> {
  const key = cooldownKey(purpose, email)
  if (await app.redis.set(key, String(Date.now()), 'EX', RESEND_COOLDOWN_S, 'NX') === 'OK') return
  const sentAt = Number(await app.redis.get(key))
  const left = sentAt > 0 ? Math.ceil((sentAt + RESEND_COOLDOWN_S * 1000 - Date.now()) / 1000) : 1
  throw fail(AM.resendWait, { seconds: Math.min(RESEND_COOLDOWN_S, Math.max(1, left)) })
}

/** Mails a new 6-digit code to `email` (replacing any earlier one). */
export async function sendEmailCode (app: FastifyInstance, req: FastifyRequest, email: string): Promise<void> {
  await claimSendSlot(app, 'email', email)
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0')
  const key = verifyKey('email', email)
  await app.redis.multi().del(key).hset(key, { hash: sha256(code), attempts: '0' }).expire(key, CODE_TTL_S).exec()
  try {
    await mailTo(app, req, email, { subject: AM.codeMailSubject, text: AM.codeMailText, html: AM.codeMailHtml }, { code, minutes: CODE_TTL_S / 60 })
  } catch (err) {
    // Nothing arrived, so the user may try again at once.
    await app.redis.del(key, cooldownKey('email', email))
    throw err
  }
}

/** True, once, for the code last mailed to `email` within its lifetime; a wrong code counts as a guess. */
export async function consumeEmailCode (app: FastifyInstance, email: string, code: string): Promise<boolean> {
  const key = verifyKey('email', email)
  const stored = await app.redis.hget(key, 'hash')
  if (stored === null) return false
  if (digestsEqual(stored, sha256(code.trim()))) {
    // Of concurrent requests with the right code, only the one whose DEL removed it wins.
    return await app.redis.del(key) === 1
  }
  await app.redis.eval(COUNT_WRONG_GUESS, 1, key, MAX_CODE_ATTEMPTS)
  return false
}

/** Mails a single-use reset link for `email`; `baseUrl` is the console's address without a trailing slash. */
export async function sendResetLink (app: FastifyInstance, req: FastifyRequest, email: string, baseUrl: string): Promise<void> {
  await claimSendSlot(app, 'reset', email)
  const token = randomBytes(32).toString('base64url')
  const key = verifyKey('reset', email)
  await app.redis.set(key, sha256(token), 'EX', RESET_TTL_S)
  const link = `${baseUrl}/user/reset?${new URLSearchParams({ email, token }).toString()}`
  try {
    await mailTo(app, req, email, { subject: AM.resetMailSubject, text: AM.resetMailText, html: AM.resetMailHtml }, { link, minutes: RESET_TTL_S / 60 })
  } catch (err) {
    await app.redis.del(key, cooldownKey('reset', email))
    throw err
  }
}

/**
 * True, once, for the newest reset token of `email` within its lifetime. A wrong token leaves the
 * real one alone (tokens are 256 random bits: guessing is hopeless, and burning would let anyone
 * who knows the address cancel the owner's reset).
 */
export async function consumeResetToken (app: FastifyInstance, email: string, token: string): Promise<boolean> {
  const key = verifyKey('reset', email)
  const stored = await app.redis.get(key)
  if (stored === null || !digestsEqual(stored, sha256(token))) return false
  return await app.redis.del(key) === 1
}

const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** A random 12-character password of letters and digits. */
export function randomPassword (length = 12): string {
  return Array.from({ length }, () => PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)]).join('')
}
