import { CHECKIN_QUOTA_MAX, OPTION_DEFAULTS, type OptionKey, type OptionValues } from '@modelgate/contracts'
import { defineMessages, type Msg } from '../lib/i18n.js'
import { readCreemProducts } from './creem.js'
import { isDomainName, parseOrigins } from './passkeys.js'

export const OM = defineMessages({
  unknownOption: { en: 'Unknown option {key}', zh: '未知的配置项 {key}' },
  notBoolean: { en: '{key} must be true or false', zh: '{key} 必须是 true 或 false' },
  notNumber: { en: '{key} must be a number of at least {min}', zh: '{key} 必须是不小于 {min} 的数字' },
  notInteger: { en: '{key} must be a whole number between {min} and {max}', zh: '{key} 必须是 {min} 到 {max} 之间的整数' },
  notJson: { en: '{key} must be valid JSON: {detail}', zh: '{key} 不是合法的 JSON：{detail}' },
  badJsonShape: { en: '{key}: {detail}', zh: '{key}：{detail}' },
  badChoice: { en: '{key} must be one of {choices}', zh: '{key} 必须是 {choices} 之一' },
  badAddress: { en: '{key} must be an http(s) address', zh: '{key} 必须是 http(s) 地址' },
  serverAddressFirst: { en: 'Set the server address before the payment settings', zh: '请先设置服务器地址，再保存支付设置' },
  clearNotSecret: { en: '{key} is not a credential: only credentials are cleared this way', zh: '{key} 不是密钥类配置，只有密钥类配置可以这样清除' },
  badRpId: { en: '{key} must be a domain name such as example.com (no scheme, port or path), or empty', zh: '{key} 必须是域名（例如 example.com，不含协议、端口和路径），或留空' },
  badCurrency: { en: '{key} must be a three-letter ISO currency code such as usd (two or zero decimals)', zh: '{key} 必须是三位 ISO 货币代码，例如 usd（两位或零位小数）' },
  checkinRange: { en: 'The check-in minimum ({min}) cannot be above the maximum ({max})', zh: '签到最小额度（{min}）不能大于最大额度（{max}）' },
  badOrigin: { en: '{key}: "{value}" is not an origin such as https://console.example.com (scheme, host and optional port only)', zh: '{key}：“{value}”不是来源地址，例如 https://console.example.com（仅含协议、主机和可选端口）' }
})

/**
 * What a credential option reads as ('' from GET /api/option/, or a mask such as `********` in
 * other consoles): sent back by a form saved whole, it means "keep the stored value".
 */
export function isSecretPlaceholder (value: string): boolean {
  return /^\**$/.test(value.trim())
}

export class OptionError extends Error {
  readonly msg: Msg
  readonly vars: Record<string, string | number>
  constructor (msg: Msg, vars: Record<string, string | number>) {
    super(msg.en)
    this.msg = msg
    this.vars = vars
  }
}

type Rule = (key: string, raw: string) => string

const bool: Rule = (key, raw) => {
  if (raw !== 'true' && raw !== 'false') throw new OptionError(OM.notBoolean, { key })
  return raw
}
const number = (min: number): Rule => (key, raw) => {
  const n = Number(raw)
  if (raw.trim() === '' || !Number.isFinite(n) || n < min) throw new OptionError(OM.notNumber, { key, min })
  return String(n)
}
const integer = (min: number, max = Number.MAX_SAFE_INTEGER): Rule => (key, raw) => {
  const n = Number(raw)
  if (raw.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) throw new OptionError(OM.notInteger, { key, min, max })
  return String(n)
}
const choice = (...choices: string[]): Rule => (key, raw) => {
  if (!choices.includes(raw)) throw new OptionError(OM.badChoice, { key, choices: choices.join(', ') })
  return raw
}
// Addresses lose trailing slashes (docs/domain.md); empty clears the setting.
const address: Rule = (key, raw) => {
  const value = raw.trim().replace(/\/+$/, '')
  if (value !== '' && !/^https?:\/\/[^\s]+$/.test(value)) throw new OptionError(OM.badAddress, { key })
  return value
}
const text: Rule = (_key, raw) => raw
// Stripe counts in lower-case ISO 4217 codes; three-decimal currencies need rounding rules not handled here.
const currency: Rule = (key, raw) => {
  const value = raw.trim().toLowerCase()
  if (!/^[a-z]{3}$/.test(value) || ['bhd', 'jod', 'kwd', 'omr', 'tnd'].includes(value)) throw new OptionError(OM.badCurrency, { key })
  return value
}
// Passkeys: the relying party ID is a domain name; the allowed origins are bare origins (services/passkeys.ts).
const rpId: Rule = (key, raw) => {
  const value = raw.trim().toLowerCase()
  if (value !== '' && !isDomainName(value)) throw new OptionError(OM.badRpId, { key })
  return value
}
const originList: Rule = (key, raw) => {
  const given = raw.split(/[\s,]+/).filter((s) => s !== '')
  const origins = parseOrigins(raw)
  const bad = origins.indexOf(undefined)
  if (bad >= 0) throw new OptionError(OM.badOrigin, { key, value: (given[bad] ?? '').slice(0, 200) })
  return [...new Set(origins)].join(',')
}

function parseJson (key: string, raw: string): unknown {
  try {
    return JSON.parse(raw)
  } catch (err) {
    throw new OptionError(OM.notJson, { key, detail: (err as Error).message })
  }
}
const jsonObject = (check: (v: unknown) => boolean, expected: string): Rule => (key, raw) => {
  const value = parseJson(key, raw)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new OptionError(OM.badJsonShape, { key, detail: 'expected a JSON object' })
  for (const [name, v] of Object.entries(value)) {
    if (name.trim() === '') throw new OptionError(OM.badJsonShape, { key, detail: 'names must not be empty' })
    if (!check(v)) throw new OptionError(OM.badJsonShape, { key, detail: `${name}: expected ${expected}` })
  }
  return JSON.stringify(value)
}
const nonNegative = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0
const ratioMap = jsonObject(nonNegative, 'a number >= 0')
const stringMap = jsonObject((v) => typeof v === 'string', 'a string')
const jsonArray: Rule = (key, raw) => {
  const value = parseJson(key, raw)
  if (!Array.isArray(value)) throw new OptionError(OM.badJsonShape, { key, detail: 'expected a JSON array' })
  return JSON.stringify(value)
}
// Creem top-up products (new-api's shape): each a Creem product id, a price, a currency and the quota it credits.
const creemProductList: Rule = (key, raw) => {
  const read = readCreemProducts(parseJson(key, raw.trim() === '' ? '[]' : raw))
  if ('problem' in read) throw new OptionError(OM.badJsonShape, { key, detail: read.problem })
  return JSON.stringify(read.products)
}
// The whitelist keeps only non-empty, distinct domains (docs/domain.md).
const domainList: Rule = (_key, raw) => [...new Set(raw.split(/[,\s]+/).map((d) => d.trim().toLowerCase()).filter((d) => d !== ''))].join(',')

const RULES: Partial<Record<OptionKey, Rule>> = {
  QuotaPerUnit: number(1),
  Price: number(0),
  MinTopUp: number(0),
  StripeUnitPrice: number(0),
  StripeMinTopUp: integer(0, 10_000_000),
  StripePromotionCodesEnabled: bool,
  StripeRefundDeductsQuota: bool,
  StripeCurrency: currency,
  StripeApiBase: address,
  CreemTestMode: bool,
  CreemProducts: creemProductList,
  CreemApiBase: address,
  CreemRefundDeductsQuota: bool,
  RetryTimes: integer(0, 10),
  ModelRequestRateLimitDurationMinutes: integer(1, 1440),
  ModelRequestRateLimitCount: integer(0),
  ModelRequestRateLimitSuccessCount: integer(1),
  QuotaForNewUser: integer(0),
  QuotaForInviter: integer(0),
  QuotaForInvitee: integer(0),
  'checkin_setting.enabled': bool,
  'checkin_setting.min_quota': integer(0, CHECKIN_QUOTA_MAX),
  'checkin_setting.max_quota': integer(0, CHECKIN_QUOTA_MAX),
  PreConsumedQuota: integer(0),
  QuotaRemindThreshold: integer(0),
  ChannelDisableThreshold: number(0),
  DataExportInterval: integer(1, 1440),
  LogRetentionDays: integer(0, 36500),
  AuditLogRetentionDays: integer(0, 36500),
  DataExportDefaultTime: choice('hour', 'day', 'week'),
  SMTPPort: integer(1, 65535),
  ServerAddress: address,
  WorkerUrl: address,
  PayAddress: address,
  CustomCallbackAddress: address,
  WeChatServerAddress: address,
  GroupRatio: ratioMap,
  TopupGroupRatio: ratioMap,
  ModelRatio: ratioMap,
  CompletionRatio: ratioMap,
  ModelPrice: ratioMap,
  CacheRatio: ratioMap,
  CreateCacheRatio: ratioMap,
  AudioRatio: ratioMap,
  AudioCompletionRatio: ratioMap,
  UserUsableGroups: stringMap,
  Chats: jsonArray,
  EmailDomainWhitelist: domainList,
  TwoFactorRequiredForAdmins: bool,
  PasskeyRPID: rpId,
  PasskeyOrigins: originList
}

/** Payment settings need the server address, which payment callbacks are built from. */
export const PAYMENT_OPTIONS: ReadonlySet<string> = new Set(['PayAddress', 'EpayId', 'EpayKey', 'Price', 'MinTopUp', 'TopupGroupRatio', 'CustomCallbackAddress',
  'StripeApiSecret', 'StripeWebhookSecret', 'StripePriceId', 'StripeUnitPrice', 'StripeMinTopUp', 'StripePromotionCodesEnabled', 'StripeCurrency', 'StripeApiBase',
  'CreemApiKey', 'CreemWebhookSecret', 'CreemTestMode', 'CreemProducts', 'CreemApiBase', 'CreemRefundDeductsQuota'])

export function isOptionKey (key: string): key is OptionKey {
  return Object.hasOwn(OPTION_DEFAULTS, key)
}

/** The normalised value to store, or an OptionError saying what is wrong. */
export function normaliseOption (key: string, raw: string): string {
  if (!isOptionKey(key)) throw new OptionError(OM.unknownOption, { key })
  const rule = RULES[key] ?? (key.endsWith('Enabled') ? bool : text)
  return rule(key, raw)
}

/**
 * Rules between options, checked against the stored values of the others: the check-in
 * minimum may not exceed the maximum (the console saves the pair in an order that keeps this).
 */
export function checkOptionAgainst (key: string, value: string, current: OptionValues): void {
  const min = key === 'checkin_setting.min_quota' ? Number(value) : current.num('checkin_setting.min_quota')
  const max = key === 'checkin_setting.max_quota' ? Number(value) : current.num('checkin_setting.max_quota')
  if ((key === 'checkin_setting.min_quota' || key === 'checkin_setting.max_quota') && min > max) throw new OptionError(OM.checkinRange, { min, max })
}
