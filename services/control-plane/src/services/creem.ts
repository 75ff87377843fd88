import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { type CreemPayBody, type CreemProductView, type OptionValues } from '@modelgate/contracts'
import {
  deleteCreemEvent,
  findSubscriptionOrderByProviderRef,
  findSubscriptionOrderByTradeNo,
  findSubscriptionPlan,
  findTopUpByCreemOrder,
  findTopUpByTradeNo,
  insertCreemEvent,
  insertSubscriptionOrder,
  insertTopUp,
  setTopUpCreemCheckout,
  setTopUpCreemOrder,
  type SubscriptionOrder,
  type TopUp,
  type User
} from '@modelgate/db'
import { CM } from '../lib/creem-messages.js'
import { fail } from '../lib/errors.js'
import { checkOutbound } from '../lib/outbound.js'
import { WM } from '../lib/wallet-messages.js'
import type { Deps } from './deps.js'
import { refundTopUpOrder } from './topups.js'
import { actOnce } from './webhook-events.js'
import { MAX_CENTS, settleTopUp } from './epay.js'
import { formatMinor, minorDecimals, parseMinor } from './stripe.js'
import { completeSubscriptionOrder, refundSubscriptionOrder, subscriptionTradeNo } from './subscriptions/orders.js'

/** Creem's own API: live, and the test mode's sandbox. */
export const CREEM_LIVE_API = 'https://api.creem.io'
export const CREEM_TEST_API = 'https://test-api.creem.io'

/** One top-up product of CreemProducts (new-api's shape): paying `price` in `currency` credits `quota`. */
export interface CreemProduct {
  name: string
  /** The product's id at Creem (`prod_...`). */
  productId: string
  /** In the currency's major unit (4.99). */
  price: number
  /** ISO 4217 code, upper case. */
  currency: string
  /** Quota units credited when paid. */
  quota: number
}

const MAX_PRODUCTS = 100

/** `price` of a product in minor units of `currency`; undefined when it is not a positive sum of that currency. */
function priceMinor (price: number, currency: string): bigint | undefined {
  if (!Number.isFinite(price) || price <= 0) return undefined
  const minor = parseMinor(String(price), minorDecimals(currency))
  if (minor === undefined || minor < 1n) return undefined
  return minor * (minorDecimals(currency) === 0 ? 100n : 1n) > MAX_CENTS ? undefined : minor
}

/**
 * CreemProducts read strictly: the products normalised, or what is wrong (for the admin, in
 * English as other option details are). Used when the option is saved and when it is read.
 */
export function readCreemProducts (value: unknown): { products: CreemProduct[] } | { problem: string } {
  if (!Array.isArray(value)) return { problem: 'expected a JSON array of products' }
  if (value.length > MAX_PRODUCTS) return { problem: `at most ${MAX_PRODUCTS} products` }
  const products: CreemProduct[] = []
  const seen = new Set<string>()
  for (const [i, item] of value.entries()) {
    const at = `product ${i + 1}`
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return { problem: `${at}: expected an object {name, productId, price, currency, quota}` }
    const p = item as Record<string, unknown>
    const name = typeof p['name'] === 'string' ? p['name'].trim() : ''
    if (name === '' || name.length > 100) return { problem: `${at}: name must be 1 to 100 characters` }
    const productId = typeof p['productId'] === 'string' ? p['productId'].trim() : ''
    if (!/^[\w.-]{1,200}$/.test(productId)) return { problem: `${at}: productId must be Creem's product id, such as prod_123 (letters, digits, _ . -)` }
    if (seen.has(productId)) return { problem: `${at}: productId ${productId} appears twice` }
    seen.add(productId)
    const currency = typeof p['currency'] === 'string' ? p['currency'].trim().toUpperCase() : ''
    if (!/^[A-Z]{3}$/.test(currency) || ['BHD', 'JOD', 'KWD', 'OMR', 'TND'].includes(currency)) return { problem: `${at}: currency must be a three-letter ISO code such as USD (two or zero decimals)` }
    const price = typeof p['price'] === 'string' && p['price'].trim() !== '' ? Number(p['price']) : p['price']
    if (typeof price !== 'number' || priceMinor(price, currency) === undefined) {
      return { problem: `${at}: price must be a number above 0 with at most ${minorDecimals(currency)} decimals` }
    }
    const quota = p['quota']
    if (typeof quota !== 'number' || !Number.isSafeInteger(quota) || quota < 1) return { problem: `${at}: quota must be a whole number of at least 1` }
    products.push({ name, productId, price, currency, quota })
  }
  return { products }
}

/** The products on sale; an unreadable option (saved behind the console's back) sells nothing. */
export function creemProducts (options: OptionValues): CreemProduct[] {
  const read = readCreemProducts(options.json('CreemProducts'))
  return 'products' in read ? read.products : []
}

/**
 * True when Creem top-up can work: the API key, the webhook secret, a product and the server
 * address the return URL is built from (what `/api/status` reports as enable_creem_topup).
 */
export function creemTopUpReady (options: OptionValues): boolean {
  return creemConfigured(options) && options.str('ServerAddress') !== '' && creemProducts(options).length > 0
}

/** The API key and the webhook secret are set: Creem checkouts can be created and their events verified. */
function creemConfigured (options: OptionValues): boolean {
  return options.str('CreemApiKey') !== '' && options.str('CreemWebhookSecret') !== ''
}

/** The products as the wallet lists them (`/api/status`); empty while Creem is not ready. */
export function creemProductViews (options: OptionValues): CreemProductView[] {
  if (!creemTopUpReady(options)) return []
  return creemProducts(options).map((p) => ({ product_id: p.productId, name: p.name, price: p.price, currency: p.currency, quota: p.quota }))
}

/** The API base: CreemApiBase (a stand-in, a proxy), else Creem's test or live API by CreemTestMode. */
export function creemApiBase (options: OptionValues): string {
  const base = options.str('CreemApiBase')
  if (base !== '') return base
  return options.bool('CreemTestMode') ? CREEM_TEST_API : CREEM_LIVE_API
}

/** What a checkout is created with (Creem's POST /v1/checkouts). */
export interface CheckoutRequest {
  productId: string
  /** Our trade number: Creem sends it back as the checkout's request_id. */
  requestId: string
  successUrl: string
  metadata: Record<string, string>
  email?: string
}

/** Creem's message in a refusal (a string or a list of them), cut short; never the key. */
function creemDetail (body: unknown, status: number): string {
  const message = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['message'] ?? (body as Record<string, unknown>)['error'] : undefined
  const text = Array.isArray(message) ? message.filter((m) => typeof m === 'string').join('; ') : typeof message === 'string' ? message : ''
  return (text === '' ? `HTTP ${status}` : text).slice(0, 300)
}

/**
 * Creates a Creem checkout through the outbound guard and answers its id and page. A refusal or
 * no answer becomes the payer's message; the key reaches only Creem's API, never a log.
 */
export async function createCreemCheckout (deps: Deps<'log' | 'outbound'>, options: OptionValues, req: CheckoutRequest): Promise<{ id: string, url: string }> {
  const base = creemApiBase(options)
  const body = {
    product_id: req.productId,
    request_id: req.requestId,
    success_url: req.successUrl,
    metadata: req.metadata,
    ...(req.email !== undefined && req.email !== '' ? { customer: { email: req.email } } : {})
  }
  let res: Awaited<ReturnType<Deps<'outbound'>['outbound']['fetch']>>
  let answer: unknown
  try {
    res = await deps.outbound.fetch(`${base}/v1/checkouts`, {
      method: 'POST',
      headers: { 'x-api-key': options.str('CreemApiKey'), 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(20_000)
    })
    answer = await res.json().catch(() => undefined)
  } catch (err) {
    deps.log.warn({ err }, 'creem could not be reached')
    throw fail(CM.creemUnreachable)
  }
  if (res.status === 401 || res.status === 403) {
    deps.log.warn({ reason: 'authentication', status: res.status }, 'creem refused the api key')
    throw fail(CM.creemAuthFailed)
  }
  if (!res.ok) {
    const detail = creemDetail(answer, res.status)
    deps.log.warn({ status: res.status, detail }, 'creem refused the checkout')
    throw fail(CM.creemRefused, { detail })
  }
  const a = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>
  const url = a['checkout_url']
  const id = a['id']
  if (typeof url !== 'string' || !/^https?:\/\//.test(url) || typeof id !== 'string' || id === '') {
    deps.log.warn({ status: res.status }, 'creem answered a checkout without checkout_url or id')
    throw fail(CM.creemUnreachable)
  }
  return { id, url }
}

/**
 * The options for a Creem payment, refusing while Creem or the server address is not set, or
 * while CreemApiBase is an address the outbound guard refuses (checked before any order exists;
 * the guard checks it again when connecting).
 */
async function creemOptions (deps: Deps<'loadOptions' | 'outbound'>): Promise<OptionValues> {
  const options = await deps.loadOptions()
  if (!creemConfigured(options)) throw fail(CM.creemDisabled)
  if (options.str('ServerAddress') === '') throw fail(WM.callbackAddressMissing)
  if (options.str('CreemApiBase') !== '') await checkOutbound(deps.outbound, { url: options.str('CreemApiBase') })
  return options
}

/**
 * Creates a pending order for one of the CreemProducts and its Creem checkout; answers the page
 * the browser is sent to. The order fixes who is credited, how much and in which currency: a
 * webhook can only settle it as created.
 */
export async function createCreemOrder (deps: Deps<'db' | 'log' | 'loadOptions' | 'outbound'>, user: User, body: CreemPayBody): Promise<{ checkout_url: string, pay_link: string }> {
  const options = await creemOptions(deps)
  const product = creemProducts(options).find((p) => p.productId === body.product_id)
  if (product === undefined) throw fail(CM.productUnknown)
  const currency = product.currency.toLowerCase()
  const decimals = minorDecimals(currency)
  const minor = priceMinor(product.price, currency)
  if (minor === undefined) throw fail(CM.productUnknown)
  const tradeNo = `USR${user.id}NO${randomBytes(16).toString('hex')}`
  // Top-up units, as the orders list shows them: the product's quota in units of QuotaPerUnit.
  const amount = Math.round(product.quota / Math.max(1, options.num('QuotaPerUnit')))
  await insertTopUp(deps.db, { user_id: user.id, amount, money: formatMinor(minor, decimals), quota: product.quota, trade_no: tradeNo, payment_method: 'creem', currency })
  const checkout = await createCreemCheckout(deps, options, {
    productId: product.productId,
    requestId: tradeNo,
    successUrl: `${options.str('ServerAddress')}/topup?creem=success`,
    metadata: { kind: 'topup', trade_no: tradeNo, user_id: String(user.id) },
    ...(user.email !== '' ? { email: user.email } : {})
  })
  await setTopUpCreemCheckout(deps.db, tradeNo, checkout.id)
  return { checkout_url: checkout.url, pay_link: checkout.url }
}

/**
 * Creates a pending subscription order for an enabled plan sold through Creem (the plan's
 * creem_product_id) and its checkout; answers the page the browser is sent to. The order fixes the
 * plan, the payer and the sum (the plan's price): the webhook completes it only as created, through
 * `completeSubscriptionOrder`, the one path from a payment to a subscription.
 */
export async function createCreemPlanOrder (deps: Deps<'db' | 'log' | 'loadOptions' | 'outbound'>, user: User, planId: number): Promise<{ checkout_url: string, pay_link: string }> {
  const options = await creemOptions(deps)
  const found = await findSubscriptionPlan(deps.db, planId)
  if (found === undefined || !found.plan.enabled) throw fail(CM.planUnknown)
  const plan = found.plan
  if (plan.creem_product_id === '' || plan.price_minor < 1) throw fail(CM.planNoCreemProduct)
  const tradeNo = subscriptionTradeNo(user.id)
  await insertSubscriptionOrder(deps.db, { user_id: user.id, plan_id: plan.id, price_minor: plan.price_minor, currency: plan.currency, trade_no: tradeNo, payment_method: 'creem' })
  const checkout = await createCreemCheckout(deps, options, {
    productId: plan.creem_product_id,
    requestId: tradeNo,
    successUrl: `${options.str('ServerAddress')}/plans?creem=success`,
    metadata: { kind: 'subscription', trade_no: tradeNo, user_id: String(user.id), plan_id: String(plan.id) },
    ...(user.email !== '' ? { email: user.email } : {})
  })
  // The checkout is the order's provider reference until it is paid (then Creem's order id).
  await deps.db.updateTable('subscription_orders').set({ provider_ref: checkout.id }).where('trade_no', '=', tradeNo).where('status', '=', 'pending').execute()
  return { checkout_url: checkout.url, pay_link: checkout.url }
}

/** Why a webhook event was refused or skipped, for the operator's log. */
type Refusal = 'not paid' | 'unknown order' | 'checkout differs' | 'currency differs' | 'sum differs' | 'order closed' | 'partial refund'

/** What the webhook answers: 200 (handled, skipped or a replay), 400 (unreadable), 401 (bad signature), 404 (not configured). */
export type CreemWebhookOutcome = 200 | 400 | 401 | 404

type WebhookDeps = Deps<'db' | 'log' | 'loadOptions' | 'quota' | 'publishChange'>

/** One Creem webhook event: `{ id, eventType, created_at, object }`. */
interface CreemEvent {
  id: string
  type: string
  object: Record<string, unknown>
}

type Json = Record<string, unknown>
const rec = (v: unknown): Json | undefined => typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Json : undefined
const str = (v: unknown): string | undefined => typeof v === 'string' && v !== '' ? v : undefined
const whole = (v: unknown): bigint | undefined => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : undefined

/** Whether `signature` is the hex HMAC-SHA256 of `raw` under `secret`, compared in constant time. */
export function verifyCreemSignature (raw: Buffer, signature: string | undefined, secret: string): boolean {
  const given = (signature ?? '').trim().toLowerCase()
  if (!/^[0-9a-f]{64}$/.test(given)) return false
  const expected = createHmac('sha256', secret).update(raw).digest()
  return timingSafeEqual(Buffer.from(given, 'hex'), expected)
}

function parseEvent (raw: Buffer): CreemEvent | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw.toString('utf8'))
  } catch {
    return undefined
  }
  const e = rec(parsed)
  const id = str(e?.['id'])
  const type = str(e?.['eventType']) ?? str(e?.['type'])
  const object = rec(e?.['object'])
  if (id === undefined || type === undefined || object === undefined || id.length > 200) return undefined
  return { id, type: type.slice(0, 100), object }
}

/**
 * Handles one webhook delivery: the `creem-signature` header checked against CreemWebhookSecret
 * on the raw body, the event recorded once by id, then acted on. Replays, and any number of
 * concurrent deliveries for one checkout, credit the order once: `settleTopUp`'s conditional
 * update decides. A refusal logs its reason, never the secret.
 */
export async function handleCreemWebhook (deps: WebhookDeps, raw: Buffer, signature: string | undefined): Promise<CreemWebhookOutcome> {
  const options = await deps.loadOptions()
  const secret = options.str('CreemWebhookSecret')
  if (secret === '') return 404
  if (!verifyCreemSignature(raw, signature, secret)) {
    deps.log.warn({ reason: 'bad signature', signature: signature === undefined ? 'missing' : 'mismatch' }, 'creem webhook refused')
    return 401
  }
  const event = parseEvent(raw)
  if (event === undefined) {
    deps.log.warn({ reason: 'unreadable event' }, 'creem webhook refused')
    return 400
  }
  const ledger = { record: async (id: string, type: string) => await insertCreemEvent(deps.db, id, type), forget: async (id: string) => { await deleteCreemEvent(deps.db, id) } }
  await actOnce(deps, 'creem', ledger, event, async () => { await actOn(deps, options, event) })
  return 200
}

async function actOn (deps: WebhookDeps, options: OptionValues, event: CreemEvent): Promise<void> {
  const refuse = (reason: Refusal, extra: Record<string, unknown> = {}): void => {
    deps.log.warn({ event: event.id.slice(0, 100), type: event.type, reason, ...extra }, 'creem webhook event refused')
  }
  switch (event.type) {
    case 'checkout.completed': {
      const checkout = event.object
      const tradeNo = (str(checkout['request_id']) ?? str(rec(checkout['metadata'])?.['trade_no']) ?? '').slice(0, 100)
      const paid = rec(checkout['order'])
      const paidStatus = str(paid?.['status'])
      if (paid === undefined || (paidStatus !== undefined && paidStatus !== 'paid')) return refuse('not paid', { trade_no: tradeNo })
      const order = tradeNo === '' ? undefined : await findTopUpByTradeNo(deps.db, tradeNo)
      if (order === undefined && tradeNo !== '') {
        // Not a top-up: a plan bought through Creem (its trade number is a subscription order's).
        const planOrder = await findSubscriptionOrderByTradeNo(deps.db, tradeNo)
        if (planOrder !== undefined) return await completePlanCheckout(deps, planOrder, checkout, paid, refuse)
      }
      if (order?.payment_method !== 'creem' || order.currency === null) return refuse('unknown order', { trade_no: tradeNo })
      if (order.creem_checkout_id !== null && order.creem_checkout_id !== str(checkout['id'])) return refuse('checkout differs', { trade_no: tradeNo })
      if ((str(paid['currency']) ?? '').toLowerCase() !== order.currency) return refuse('currency differs', { trade_no: tradeNo })
      if (!sumMatches(order, paid)) return refuse('sum differs', { trade_no: tradeNo, amount: paid['amount'] })
      const creemOrder = str(paid['id'])
      if (creemOrder !== undefined && order.creem_order_id === null) await setTopUpCreemOrder(deps.db, tradeNo, creemOrder.slice(0, 200))
      if (order.status === 'success' || order.status === 'refunded') return
      if (order.status !== 'pending') return refuse('order closed', { trade_no: tradeNo })
      // Undefined: a concurrent delivery (or an admin's completion) settled the order first.
      await settleTopUp(deps, options, tradeNo, 'notification')
      return
    }
    case 'refund.created': {
      const refund = event.object
      const creemOrder = str(rec(refund['order'])?.['id'])
      let order = creemOrder === undefined ? undefined : await findTopUpByCreemOrder(deps.db, creemOrder)
      const requestId = str(rec(refund['checkout'])?.['request_id'])
      if (order === undefined && requestId !== undefined) order = await findTopUpByTradeNo(deps.db, requestId.slice(0, 100))
      if (order === undefined) {
        // Not a top-up: a plan bought through Creem (the order Creem names, or the checkout's trade number).
        const planOrder = (creemOrder === undefined ? undefined : await findSubscriptionOrderByProviderRef(deps.db, creemOrder.slice(0, 200))) ??
          (requestId === undefined ? undefined : await findSubscriptionOrderByTradeNo(deps.db, requestId.slice(0, 100)))
        if (planOrder?.payment_method === 'creem') {
          const amount = whole(refund['refund_amount'])
          if (amount !== undefined && amount < BigInt(planOrder.price_minor)) return refuse('partial refund', { trade_no: planOrder.trade_no, refund_amount: Number(amount) })
          await refundSubscriptionOrder(deps, planOrder.trade_no, 'creem', options.bool('CreemRefundDeductsQuota'))
          return
        }
      }
      if (order?.payment_method !== 'creem') return refuse('unknown order', { order: creemOrder?.slice(0, 100) })
      // A partial refund leaves the credit: the admin can adjust the balance by hand.
      const refunded = whole(refund['refund_amount'])
      const expected = parseMinor(order.money, minorDecimals(order.currency ?? ''))
      if (refunded !== undefined && expected !== undefined && refunded < expected) return refuse('partial refund', { trade_no: order.trade_no, refund_amount: Number(refunded) })
      await refundTopUpOrder(deps, options, order, 'creem refund', options.bool('CreemRefundDeductsQuota'))
      return
    }
    default:
  }
}

/**
 * A paid checkout for a subscription order: checked as a top-up's is (checkout, currency, sum),
 * then completed once through `completeSubscriptionOrder` with Creem's order id as its reference.
 */
async function completePlanCheckout (deps: WebhookDeps, order: SubscriptionOrder, checkout: Json, paid: Json, refuse: (reason: Refusal, extra?: Record<string, unknown>) => void): Promise<void> {
  const tradeNo = order.trade_no
  if (order.payment_method !== 'creem') return refuse('unknown order', { trade_no: tradeNo })
  if (order.status === 'pending' && order.provider_ref !== null && order.provider_ref !== str(checkout['id'])) return refuse('checkout differs', { trade_no: tradeNo })
  if ((str(paid['currency']) ?? '').toLowerCase() !== order.currency.toLowerCase()) return refuse('currency differs', { trade_no: tradeNo })
  if (!paidSum(BigInt(order.price_minor), paid)) return refuse('sum differs', { trade_no: tradeNo, amount: paid['amount'] })
  if (order.status === 'success') return
  if (order.status !== 'pending') return refuse('order closed', { trade_no: tradeNo })
  // Undefined: a concurrent delivery (or an admin's completion) completed the order first.
  await completeSubscriptionOrder(deps, tradeNo, 'notification', str(paid['id'])?.slice(0, 200))
}

/**
 * The checkout paid the order's sum: Creem's order amount is the product's price, or, with tax
 * added on top, its sub_total is and the amount is not below it. A discount is not accepted.
 */
function sumMatches (order: TopUp, paid: Json): boolean {
  const expected = parseMinor(order.money, minorDecimals(order.currency ?? ''))
  return expected !== undefined && paidSum(expected, paid)
}

function paidSum (expected: bigint, paid: Json): boolean {
  const amount = whole(paid['amount'])
  if (amount === expected) return true
  const subTotal = whole(paid['sub_total'])
  return subTotal === expected && amount !== undefined && amount >= subTotal
}

