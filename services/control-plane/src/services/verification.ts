import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto'
import type { OptionValues } from '@modelgate/contracts'
import { isSmtpConfigured, MailNotConfiguredError, sendMail, smtpSettingsFrom } from '@modelgate/mail'
import type { FastifyRequest } from 'fastify'
import { AM } from '../lib/account-messages.js'
import { ApiError, fail } from '../lib/errors.js'
import type { Msg } from '../lib/i18n.js'
import type { Deps } from './deps.js'

/** E-mail codes are valid for 3 minutes (docs/domain.md). */
export const CODE_TTL_S = 3 * 60
/** Another code or reset mail to the same address is refused for 30 seconds (docs/domain.md). */
export const RESEND_COOLDOWN_S = 30
/** Code and reset mails to one address within an hour, whoever asks (both kinds counted together). */
export const MAILS_PER_ADDRESS_PER_HOUR = 5
/**
 * Code and reset mails asked for by one client address within an hour, whatever the recipients
 * (addresses without an account count too, so a sweep over a list of addresses is capped).
 */
export const MAILS_PER_IP_PER_HOUR = 20
const MAIL_WINDOW_S = 60 * 60
/** Wrong guesses that burn a code: 5 tries at 1 in a million each cannot brute force it. */
export const MAX_CODE_ATTEMPTS = 5
// No option sets the reset link's lifetime (docs/domain.md leaves the value open): 15 minutes.
export const RESET_TTL_S = 15 * 60

/** `email`: codes for registration and binding; `reset`: password-reset tokens. */
export type VerifyPurpose = 'email' | 'reset'
export const verifyKey = (purpose: VerifyPurpose, email: string) => `verify:${purpose}:${email}`
export const cooldownKey = (purpose: VerifyPurpose, email: string) => `verify:cooldown:${purpose}:${email}`
export const mailCountKey = (by: 'email' | 'ip', who: string) => `verify:hourly:${by}:${who}`

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
async function mailTo (deps: Deps<'loadOptions' | 'outbound'>, req: FastifyRequest, to: string, msgs: { subject: Msg, text: Msg, html: Msg }, vars: Record<string, string | number>): Promise<void> {
  const options = await deps.loadOptions()
  const system = options.str('SystemName')
  const all = { ...vars, system }
  const escaped = Object.fromEntries(Object.entries(all).map(([k, v]) => [k, escapeHtml(String(v))]))
  try {
    await sendMail({ ...smtpSettingsFrom(options), resolve: async (host) => await deps.outbound.resolveAllowed(host) }, {
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

// One step for every mail: the per-address cooldown, then the hourly counts per address and per
// client IP (fixed windows from the first mail), all in Redis so every replica shares them.
// Returns 0 when the mail may go (cooldown set, both counts taken), -ms left of the cooldown, or
// the seconds until the exhausted hourly window ends.
const CLAIM_MAIL = `
local left = redis.call('PTTL', KEYS[1])
if left > 0 then return -left end
for i = 2, 3 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i]) then
    local ttl = redis.call('TTL', KEYS[i])
    if ttl < 1 then ttl = tonumber(ARGV[4]) end
    return ttl
  end
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
for i = 2, 3 do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('EXPIRE', KEYS[i], ARGV[4]) end
end
return 0
`

/**
 * Claims the right to mail `email` now for the client at `ip`: refused with the seconds left
 * within the 30 s cooldown, and with 429 plus Retry-After past an hourly cap.
 */
async function claimSendSlot (deps: Deps<'redis'>, req: FastifyRequest, purpose: VerifyPurpose, email: string): Promise<void> {
  const answer = Number(await deps.redis.eval(CLAIM_MAIL, 3, cooldownKey(purpose, email), mailCountKey('email', email), mailCountKey('ip', req.ip),
    RESEND_COOLDOWN_S * 1000, MAILS_PER_ADDRESS_PER_HOUR, MAILS_PER_IP_PER_HOUR, MAIL_WINDOW_S))
  if (answer === 0) return
  if (answer < 0) throw fail(AM.resendWait, { seconds: Math.min(RESEND_COOLDOWN_S, Math.max(1, Math.ceil(-answer / 1000))) })
  throw new ApiError(429, AM.mailHourlyCap, { minutes: Math.ceil(answer / 60) }, { 'retry-after': String(answer) })
}

/** Mails a new 6-digit code to `email` (replacing any earlier one). */
export async function sendEmailCode (deps: Deps<'redis' | 'loadOptions' | 'outbound'>, req: FastifyRequest, email: string): Promise<void> {
  await claimSendSlot(deps, req, 'email', email)
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0')
  const key = verifyKey('email', email)
  await deps.redis.multi().del(key).hset(key, { hash: sha256(code), attempts: '0' }).expire(key, CODE_TTL_S).exec()
  try {
    await mailTo(deps, req, email, { subject: AM.codeMailSubject, text: AM.codeMailText, html: AM.codeMailHtml }, { code, minutes: CODE_TTL_S / 60 })
  } catch (err) {
    // Nothing arrived, so the user may try again at once.
    await deps.redis.del(key, cooldownKey('email', email))
    throw err
  }
}

/** True, once, for the code last mailed to `email` within its lifetime; a wrong code counts as a guess. */
export async function consumeEmailCode (deps: Deps<'redis'>, email: string, code: string): Promise<boolean> {
  const key = verifyKey('email', email)
  const stored = await deps.redis.hget(key, 'hash')
  if (stored === null) return false
  if (digestsEqual(stored, sha256(code.trim()))) {
    // Of concurrent requests with the right code, only the one whose DEL removed it wins.
    return await deps.redis.del(key) === 1
  }
  await deps.redis.eval(COUNT_WRONG_GUESS, 1, key, MAX_CODE_ATTEMPTS)
  return false
}

/**
 * What a reset request for an address without an account does: claims the same cooldown as a real
 * send and mails nothing, so the answers for known and unknown addresses cannot be told apart.
 */
export async function skipResetLink (deps: Deps<'redis' | 'loadOptions'>, req: FastifyRequest, email: string): Promise<void> {
  // A known address fails this way when SMTP is not set up, so an unknown one does too.
  if (!isSmtpConfigured(smtpSettingsFrom(await deps.loadOptions()))) throw fail(AM.smtpNotConfigured)
  await claimSendSlot(deps, req, 'reset', email)
}

/** Mails a single-use reset link for `email`; `baseUrl` is the console's address without a trailing slash. */
export async function sendResetLink (deps: Deps<'redis' | 'loadOptions' | 'outbound'>, req: FastifyRequest, email: string, baseUrl: string): Promise<void> {
  await claimSendSlot(deps, req, 'reset', email)
  const token = randomBytes(32).toString('base64url')
  const key = verifyKey('reset', email)
  await deps.redis.set(key, sha256(token), 'EX', RESET_TTL_S)
  const link = `${baseUrl}/user/reset?${new URLSearchParams({ email, token }).toString()}`
  try {
    await mailTo(deps, req, email, { subject: AM.resetMailSubject, text: AM.resetMailText, html: AM.resetMailHtml }, { link, minutes: RESET_TTL_S / 60 })
  } catch (err) {
    await deps.redis.del(key, cooldownKey('reset', email))
    throw err
  }
}

/**
 * True, once, for the newest reset token of `email` within its lifetime. A wrong token leaves the
 * real one alone (tokens are 256 random bits: guessing is hopeless, and burning would let anyone
 * who knows the address cancel the owner's reset).
 */
export async function consumeResetToken (deps: Deps<'redis'>, email: string, token: string): Promise<boolean> {
  const key = verifyKey('reset', email)
  const stored = await deps.redis.get(key)
  if (stored === null || !digestsEqual(stored, sha256(token))) return false
  return await deps.redis.del(key) === 1
}

const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** A random 12-character password of letters and digits. */
export function randomPassword (length = 12): string {
  return Array.from({ length }, () => PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)]).join('')
}
