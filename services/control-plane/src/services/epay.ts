import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { LOG_TYPE, type OptionValues, type PaymentMethod, type TopUpPayBody } from '@modelgate/contracts'
import { addUserQuota, completeTopUp, type Database, findTopUpByTradeNo, insertLog, insertTopUp, type TopUp, type Transaction, type User } from '@modelgate/db'
import { fail } from '../lib/errors.js'
import { M } from '../lib/messages.js'
import { WM } from '../lib/wallet-messages.js'
import type { Deps } from './deps.js'
import { describeQuota } from './redemptions.js'

/** Request or notification parameters of the epay ("easy pay", 彩虹易支付) protocol. */
export type EpayParams = Record<string, string>

/**
 * The epay MD5 signature: every parameter except `sign`, `sign_type` and empty ones, sorted by
 * name (byte order), joined as `k=v&k2=v2` with raw values, the merchant key appended directly.
 */
export function epaySign (params: EpayParams, key: string): string {
  const text = Object.entries(params)
    .filter(([k, v]) => k !== 'sign' && k !== 'sign_type' && v !== '')
    .sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  return createHash('md5').update(text + key, 'utf8').digest('hex')
}

/** Whether `params.sign` is the signature of `params` under `key`, compared in constant time. */
export function verifyEpaySign (params: EpayParams, key: string): boolean {
  const given = params['sign']
  if (given === undefined) return false
  const expected = Buffer.from(epaySign(params, key))
  const actual = Buffer.from(given.toLowerCase())
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** The largest sum the orders table holds (numeric(14, 2)), in cents. */
export const MAX_CENTS = 99_999_999_999_999n

/** A non-negative finite number as an exact decimal `digits × 10^-scale`, from its shortest text form. */
function toDecimal (n: number): { digits: bigint, scale: number } {
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(n))
  if (m === null) throw new RangeError(`${n} is not a non-negative finite number`)
  const fraction = m[2] ?? ''
  const scale = fraction.length - Number(m[3] ?? 0)
  const digits = BigInt(m[1]! + fraction)
  return scale >= 0 ? { digits, scale } : { digits: digits * 10n ** BigInt(-scale), scale: 0 }
}

/**
 * `amount × price × ratio` in cents, rounded half up. Computed on the decimal values as the
 * admin typed them (7.3, 0.8), so no binary floating-point error reaches the sum to pay.
 * `decimals` is the currency's minor unit exponent (2 for cents, 0 for zero-decimal currencies).
 */
export function payableCents (amount: number, price: number, ratio: number, decimals = 2): bigint {
  const p = toDecimal(price)
  const r = toDecimal(ratio)
  const unit = 10n ** BigInt(p.scale + r.scale)
  const hundredths = BigInt(amount) * p.digits * r.digits * 10n ** BigInt(decimals)
  return (hundredths * 2n + unit) / (2n * unit)
}

/** Cents as a decimal string with two decimals, e.g. 2190n → "21.90". */
export function formatCents (cents: bigint): string {
  return `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`
}

/** A decimal sum ("21.9", "21.90") in cents; undefined when it is not one or has fractions of a cent. */
export function parseCents (text: string): bigint | undefined {
  const m = /^(\d{1,15})(?:\.(\d{1,2})0*)?$/.exec(text.trim())
  if (m === null) return undefined
  return BigInt(m[1]!) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'))
}

/** The top-up price factor of `group` (TopupGroupRatio); 1 when unset, as for a ratio of 0. */
export function topUpGroupRatio (options: OptionValues, group: string): number {
  const ratios = options.json('TopupGroupRatio')
  if (typeof ratios !== 'object' || ratios === null || !Object.hasOwn(ratios, group)) return 1
  const ratio = (ratios as Record<string, unknown>)[group]
  return typeof ratio === 'number' && Number.isFinite(ratio) && ratio > 0 ? ratio : 1
}

export interface EpaySettings {
  payAddress: string
  pid: string
  key: string
  serverAddress: string
  callbackAddress: string
}

/**
 * True when online top-up can work: the epay account and the server address the callback and
 * return URLs are built from (what `/api/status` reports as enable_online_topup).
 */
export function onlineTopUpReady (options: OptionValues): boolean {
  return options.str('PayAddress') !== '' && options.str('EpayId') !== '' && options.str('EpayKey') !== '' && options.str('ServerAddress') !== ''
}

/** The payment settings; refuses while online top-up is not configured. */
export function epaySettings (options: OptionValues): EpaySettings {
  const payAddress = options.str('PayAddress')
  const pid = options.str('EpayId')
  const key = options.str('EpayKey')
  if (payAddress === '' || pid === '' || key === '') throw fail(WM.onlineTopUpDisabled)
  const serverAddress = options.str('ServerAddress')
  // The payment provider must be able to reach the callback, and the user comes back to the site.
  if (serverAddress === '') throw fail(WM.callbackAddressMissing)
  return { payAddress, pid, key, serverAddress, callbackAddress: options.str('CustomCallbackAddress') || serverAddress }
}

interface Quote {
  settings: EpaySettings
  cents: bigint
  quota: number
}

/** What `amount` top-up units cost `user` and credit, after the minimum and range checks. */
async function quote (deps: Deps<'loadOptions'>, user: User, amount: number): Promise<Quote> {
  const options = await deps.loadOptions()
  const settings = epaySettings(options)
  const min = Math.max(1, options.num('MinTopUp'))
  if (amount < min) throw fail(WM.amountBelowMin, { min })
  const cents = payableCents(amount, options.num('Price'), topUpGroupRatio(options, user.group))
  if (cents < 1n) throw fail(WM.payableTooLow)
  const quota = Math.round(amount * options.num('QuotaPerUnit'))
  if (cents > MAX_CENTS || !Number.isSafeInteger(quota)) throw fail(WM.payableTooHigh)
  return { settings, cents, quota }
}

/** The sum `user` pays for `amount` top-up units, with two decimals. */
export async function quoteTopUp (deps: Deps<'loadOptions'>, user: User, amount: number): Promise<string> {
  return formatCents((await quote(deps, user, amount)).cents)
}

export const EPAY_TYPE: Record<PaymentMethod, string> = { zfb: 'alipay', wx: 'wxpay' }

/**
 * Creates a pending order and the signed form the console posts to the payment provider. The
 * order fixes who is credited and how much: a notification can only settle it as created.
 */
export async function createTopUpOrder (deps: Deps<'db' | 'loadOptions'>, user: User, body: TopUpPayBody): Promise<{ fields: EpayParams, url: string }> {
  const { settings, cents, quota } = await quote(deps, user, body.amount)
  const type = EPAY_TYPE[body.payment_method]
  const money = formatCents(cents)
  const tradeNo = `USR${user.id}NO${randomBytes(16).toString('hex')}`
  await insertTopUp(deps.db, { user_id: user.id, amount: body.amount, money, quota, trade_no: tradeNo, payment_method: type })
  const fields: EpayParams = {
    pid: settings.pid,
    type,
    out_trade_no: tradeNo,
    notify_url: `${settings.callbackAddress}/api/user/epay/notify`,
    return_url: `${settings.serverAddress}/log`,
    name: `TUC${body.amount}`,
    money,
    sign_type: 'MD5'
  }
  fields['sign'] = epaySign(fields, settings.key)
  return { fields, url: `${settings.payAddress}/submit.php` }
}

/** Why a payment notification was refused, for the operator's log. */
export type Refusal = 'bad signature' | 'unsupported sign_type' | 'wrong merchant' | 'not paid' | 'unknown order' | 'sum differs' | 'order closed'

/** What a notification says about its order: refused (why), or the order to settle. */
export function checkNotify (params: EpayParams, pid: string, key: string): Refusal | undefined {
  const signType = params['sign_type']
  if (signType !== undefined && signType.toUpperCase() !== 'MD5') return 'unsupported sign_type'
  if (!verifyEpaySign(params, key)) return 'bad signature'
  if (params['pid'] !== pid) return 'wrong merchant'
  if (params['trade_status'] !== 'TRADE_SUCCESS') return 'not paid'
  return undefined
}

/** Notification parameters as strings; undefined when a name repeats or a value is not text. */
export function notifyParams (source: unknown): EpayParams | undefined {
  if (typeof source !== 'object' || source === null) return {}
  const entries = Object.entries(source)
  if (entries.some(([, v]) => typeof v !== 'string')) return undefined
  return Object.fromEntries(entries) as EpayParams
}

/**
 * True while the epay callback exists: the merchant id and key are set. Without them no
 * notification can be verified, so the endpoint answers as missing.
 */
export function epayNotifyEnabled (options: OptionValues): boolean {
  return options.str('EpayId') !== '' && options.str('EpayKey') !== ''
}

/**
 * Handles a payment notification: true when it is genuine and its order is paid (now or
 * before), false otherwise. The order is credited exactly once however often the provider
 * repeats the notification, concurrently or not: the pending to success update decides, in
 * Postgres, whichever replica got the call. A refusal is logged with its reason (never the key).
 */
export async function settleEpayNotify (deps: Deps<'db' | 'log' | 'loadOptions' | 'quota' | 'publishChange'>, params: EpayParams): Promise<boolean> {
  const options = await deps.loadOptions()
  const tradeNo = params['out_trade_no'] ?? ''
  const refuse = (reason: Refusal): false => {
    deps.log.warn({ out_trade_no: tradeNo.slice(0, 100), reason }, 'epay notification refused')
    return false
  }
  const refusal = checkNotify(params, options.str('EpayId'), options.str('EpayKey'))
  if (refusal !== undefined) return refuse(refusal)
  const order = await findTopUpByTradeNo(deps.db, tradeNo)
  if (order === undefined) return refuse('unknown order')
  // The credit is the stored order's; the notification only has to name the same sum.
  const paid = parseCents(params['money'] ?? '')
  if (paid === undefined || paid !== parseCents(order.money)) return refuse('sum differs')
  if (order.status === 'success') return true
  if (order.status !== 'pending') return refuse('order closed')

  const settled = await settleTopUp(deps, options, tradeNo, 'notification')
  // Undefined: a concurrent notification (or an admin's completion) settled the order first.
  if (settled === undefined) return (await findTopUpByTradeNo(deps.db, tradeNo))?.status === 'success'
  return true
}

/**
 * Settles the pending order `tradeNo` as paid: the pending to success update, the credit and the
 * recharge log in one transaction, then the cached balance the gateways spend from. The one path
 * to a top-up credit, for provider notifications and an admin's completion alike: the conditional
 * update decides, so of any number of them (concurrent or not, on any replica) exactly one credits.
 * Returns the settled order, or undefined when it was not pending (settled meanwhile, or unknown).
 * `within` runs inside the transaction once the order is settled (an audit entry commits with it).
 */
export async function settleTopUp (
  deps: Deps<'db' | 'quota' | 'publishChange'>,
  options: OptionValues,
  tradeNo: string,
  by: 'notification' | { admin: string },
  within?: (trx: Transaction<Database>, order: TopUp) => Promise<void>
): Promise<TopUp | undefined> {
  const settled = await deps.db.transaction().execute(async (trx) => {
    const done = await completeTopUp(trx, tradeNo, Math.floor(Date.now() / 1000))
    if (done === undefined) return undefined
    const user = await addUserQuota(trx, done.user_id, done.quota)
    // Rolling back keeps the order pending, so the provider's retry can credit it once resolved.
    if (user === undefined) {
      if (by !== 'notification') throw fail(M.userNotFound)
      throw new Error(`paid order ${tradeNo} belongs to user ${done.user_id}, who no longer exists`)
    }
    const how = by === 'notification' ? '' : `, completed by admin ${by.admin}`
    await insertLog(trx, {
      type: LOG_TYPE.topup,
      user_id: done.user_id,
      username: user.username,
      quota: done.quota,
      content: `online top-up: paid ${done.money} by ${done.payment_method} (order ${tradeNo}${how}), credited ${describeQuota(options, done.quota)}`
    })
    await within?.(trx, done)
    return done
  })
  if (settled === undefined) return undefined
  await deps.quota.adjust('user', settled.user_id, settled.quota)
  await deps.publishChange({ kind: 'user', id: settled.user_id })
  return settled
}
