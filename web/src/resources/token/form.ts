import type { TokenCreateBody, TokenView } from '@modelgate/contracts'
import dayjs from 'dayjs'

/** docs/domain.md: quota presets (1, 10, 50, 100, 500 and 1000 dollars at 500000 units per dollar). */
export const QUOTA_PRESETS = [500_000, 5_000_000, 25_000_000, 50_000_000, 250_000_000, 500_000_000]
/** docs/domain.md: batch presets. */
export const BATCH_PRESETS = [10, 20, 30, 100]
/** docs/domain.md: at most 100 tokens in one batch (the server's limit too). */
export const BATCH_MAX = 100
/** docs/domain.md: a new token's default quota. */
export const DEFAULT_QUOTA = 500_000

export const EXPIRY_FORMAT = 'YYYY-MM-DD HH:mm:ss'

/** The largest per-token limits the server takes (0 is no limit). */
export const LIMIT_MAX = { rpm: 1_000_000, tpm: 2_000_000_000, concurrency: 100_000 } as const
/** The limit fields of the form, in the order the drawer shows them. */
export const LIMIT_FIELDS = ['rpm', 'tpm', 'concurrency'] as const

/** Quick expiry buttons: never, or now plus one of these (docs/domain.md). */
export const EXPIRY_PRESETS = ['never', 'minute', 'hour', 'day', 'month'] as const
export type ExpiryPreset = typeof EXPIRY_PRESETS[number]

/** The drawer's fields as typed (texts stay texts until submitted, so a half-typed value is kept). */
export interface TokenForm {
  name: string
  /** '' or '-1' for never, else `YYYY-MM-DD HH:mm:ss` local time. */
  expiry: string
  quota: string
  count: string
  unlimited: boolean
  allowIps: string
  modelLimitsEnabled: boolean
  models: string[]
  /** '' is the user's own group. */
  group: string
  /** Requests per minute; '' or 0 for no limit. */
  rpm: string
  /** Tokens per minute; '' or 0 for no limit. */
  tpm: string
  /** Requests at once; '' or 0 for no limit. */
  concurrency: string
}

export type FormErrors = Partial<Record<'name' | 'expiry' | 'quota' | 'count' | 'rpm' | 'tpm' | 'concurrency', string>>

export function emptyForm (): TokenForm {
  return {
    name: '',
    expiry: '',
    quota: String(DEFAULT_QUOTA),
    count: '1',
    unlimited: false,
    allowIps: '',
    modelLimitsEnabled: false,
    models: [],
    group: '',
    rpm: '0',
    tpm: '0',
    concurrency: '0'
  }
}

export function formOf (token: TokenView): TokenForm {
  return {
    name: token.name,
    expiry: token.expired_time === -1 ? '' : dayjs.unix(token.expired_time).format(EXPIRY_FORMAT),
    quota: String(token.remain_quota),
    count: '1',
    unlimited: token.unlimited_quota,
    allowIps: token.allow_ips,
    modelLimitsEnabled: token.model_limits_enabled,
    models: token.model_limits.split(',').map((m) => m.trim()).filter((m) => m !== ''),
    group: token.group,
    rpm: String(token.rpm_limit),
    tpm: String(token.tpm_limit),
    concurrency: String(token.concurrency_limit)
  }
}

/** The expiry text a quick button puts in the field. */
export function presetExpiry (preset: ExpiryPreset, now = dayjs()): string {
  if (preset === 'never') return ''
  return now.add(1, preset).format(EXPIRY_FORMAT)
}

/**
 * Unix seconds of the expiry text, -1 for never, undefined when it is not a real
 * `YYYY-MM-DD HH:mm:ss` time (dayjs alone would roll 2024-02-30 over to March).
 */
export function parseExpiry (text: string): number | undefined {
  const trimmed = text.trim()
  if (trimmed === '' || trimmed === '-1') return -1
  if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(trimmed)) return undefined
  const d = dayjs(trimmed)
  return d.isValid() && d.format(EXPIRY_FORMAT) === trimmed ? d.unix() : undefined
}

function wholeNumber (text: string): number | undefined {
  const trimmed = text.trim()
  if (!/^\d+$/.test(trimmed)) return undefined
  const n = Number(trimmed)
  return Number.isSafeInteger(n) ? n : undefined
}

/**
 * The i18n keys of what is wrong (docs/domain.md, Token). An expiry left as it was may lie in
 * the past (the token has simply expired); a changed one must be in the future.
 */
export function validate (form: TokenForm, creating: boolean, original?: TokenView, now = dayjs().unix()): FormErrors {
  const errors: FormErrors = {}
  if (creating && form.name.trim() === '') errors.name = 'token.form.nameRequired'
  const expiry = parseExpiry(form.expiry)
  if (expiry === undefined) errors.expiry = 'token.form.expiryInvalid'
  else if (expiry !== -1 && expiry <= now && expiry !== original?.expired_time) errors.expiry = 'token.form.expiryPast'
  if (!form.unlimited && wholeNumber(form.quota) === undefined) errors.quota = 'token.form.quotaInvalid'
  if (creating) {
    const count = wholeNumber(form.count)
    if (count === undefined || count < 1 || count > BATCH_MAX) errors.count = 'token.form.countInvalid'
  }
  for (const field of LIMIT_FIELDS) {
    const n = limitOf(form[field])
    if (n === undefined || n > LIMIT_MAX[field]) errors[field] = `token.form.${field}Invalid`
  }
  return errors
}

/** A limit as typed: blank is 0 (no limit); undefined when not a whole number. */
function limitOf (text: string): number | undefined {
  return text.trim() === '' ? 0 : wholeNumber(text)
}

/** The fields the server takes, from a form that passed {@link validate}. */
export function bodyOf (form: TokenForm): Omit<TokenCreateBody, 'count'> {
  const quota = wholeNumber(form.quota)
  return {
    name: form.name.trim(),
    expired_time: parseExpiry(form.expiry) ?? -1,
    // An unlimited token may carry any quota text: then the stored quota is left alone.
    ...(quota === undefined ? {} : { remain_quota: quota }),
    unlimited_quota: form.unlimited,
    allow_ips: form.allowIps,
    model_limits_enabled: form.modelLimitsEnabled,
    // Kept while the switch is off, so turning it back on restores the choice.
    model_limits: form.models.join(','),
    group: form.group,
    rpm_limit: limitOf(form.rpm) ?? 0,
    tpm_limit: limitOf(form.tpm) ?? 0,
    concurrency_limit: limitOf(form.concurrency) ?? 0
  }
}

export function countOf (form: TokenForm): number {
  return wholeNumber(form.count) ?? 1
}
