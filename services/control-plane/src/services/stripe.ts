import { randomBytes } from 'node:crypto'
import { type OptionValues, type StripePayBody } from '@modelgate/contracts'
import {
  deleteStripeEvent,
  findTopUpByStripePaymentIntent,
  findTopUpByTradeNo,
  insertStripeEvent,
  insertTopUp,
  setTopUpStripePaymentIntent,
  setTopUpStripeSession,
  type TopUp,
  type User
} from '@modelgate/db'
import type { Outbound } from '@modelgate/providers'
import Stripe from 'stripe'
import { fail } from '../lib/errors.js'
import { checkOutbound } from '../lib/outbound.js'
import { WM } from '../lib/wallet-messages.js'
import type { Deps } from './deps.js'
import { refundTopUpOrder } from './topups.js'
import { actOnce } from './webhook-events.js'
import { formatCents, MAX_CENTS, payableCents, settleTopUp, topUpGroupRatio } from './epay.js'
import { onPlanInvoicePaid, onPlanSessionCompleted, reversePlanPayment } from './stripe-plans.js'

/** Currencies Stripe counts in whole units (no minor unit): the sum is sent as is. */
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf'])

/** The exponent of `currency`'s minor unit as Stripe counts it: 0 or 2. */
export function minorDecimals (currency: string): 0 | 2 {
  return ZERO_DECIMAL.has(currency.toLowerCase()) ? 0 : 2
}

/** Minor units as the decimal text the orders table holds: 2190n usd → "21.90", 500n jpy → "500". */
export function formatMinor (minor: bigint, decimals: 0 | 2): string {
  return decimals === 0 ? String(minor) : formatCents(minor)
}

/** A stored order sum ("21.90", "500.00") in minor units of a currency with `decimals`; undefined when it is not one. */
export function parseMinor (text: string, decimals: 0 | 2): bigint | undefined {
  const m = /^(\d{1,15})(?:\.(\d{1,2}))?$/.exec(text.trim())
  if (m === null) return undefined
  const fraction = (m[2] ?? '').padEnd(2, '0')
  if (decimals === 0) return fraction === '00' ? BigInt(m[1]!) : undefined
  return BigInt(m[1]!) * 100n + BigInt(fraction)
}

/**
 * True when Stripe top-up can work: the secret key, the webhook secret and the server address the
 * return URLs are built from (what `/api/status` reports as enable_stripe_topup).
 */
export function stripeTopUpReady (options: OptionValues): boolean {
  return options.str('StripeApiSecret') !== '' && options.str('StripeWebhookSecret') !== '' && options.str('ServerAddress') !== ''
}

/**
 * A Stripe client for the current options: Stripe's own API, or `StripeApiBase` (a stand-in, a
 * proxy). Every call goes through the outbound guard, so a base URL resolving to a metadata
 * address is refused at connect time too. No retries: a pay request answers at once.
 */
export function stripeClient (outbound: Outbound, options: OptionValues): Stripe {
  const base = options.str('StripeApiBase')
  const config: ConstructorParameters<typeof Stripe>[1] = {
    maxNetworkRetries: 0,
    timeout: 20_000,
    // The guard's undici types and Node's global fetch types describe the same objects.
    httpClient: Stripe.createFetchHttpClient((async (url: string, init?: Parameters<Outbound['fetch']>[1]) => await outbound.fetch(String(url), init ?? {})) as unknown as typeof fetch)
  }
  if (base !== '') {
    const u = new URL(base)
    const protocol = u.protocol === 'http:' ? 'http' : 'https'
    Object.assign(config, { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port === '' ? (protocol === 'http' ? 80 : 443) : Number(u.port), protocol })
  }
  return new Stripe(options.str('StripeApiSecret'), config)
}

interface StripeQuote {
  options: OptionValues
  currency: string
  decimals: 0 | 2
  minor: bigint
  quota: number
}

/** What `amount` units cost `user` by card and credit, after the minimum and range checks. */
async function quote (deps: Deps<'loadOptions'>, user: User, amount: number): Promise<StripeQuote> {
  const options = await deps.loadOptions()
  if (options.str('StripeApiSecret') === '' || options.str('StripeWebhookSecret') === '') throw fail(WM.stripeTopUpDisabled)
  if (options.str('ServerAddress') === '') throw fail(WM.callbackAddressMissing)
  const min = Math.max(1, options.num('StripeMinTopUp'))
  if (amount < min) throw fail(WM.amountBelowMin, { min })
  const currency = options.str('StripeCurrency').toLowerCase()
  const decimals = minorDecimals(currency)
  // A Stripe Price fixes the unit amount, so no group ratio can apply to it.
  const ratio = options.str('StripePriceId') === '' ? topUpGroupRatio(options, user.group) : 1
  const minor = payableCents(amount, options.num('StripeUnitPrice'), ratio, decimals)
  if (minor < 1n) throw fail(WM.payableTooLow)
  const quota = Math.round(amount * options.num('QuotaPerUnit'))
  // The orders table holds hundredths whatever the currency: a whole-unit sum takes 100 of them.
  if (minor * (decimals === 0 ? 100n : 1n) > MAX_CENTS || minor > BigInt(Number.MAX_SAFE_INTEGER) || !Number.isSafeInteger(quota)) throw fail(WM.payableTooHigh)
  return { options, currency, decimals, minor, quota }
}

/** The sum `user` pays by card for `amount` units, as a decimal string in the Stripe currency. */
export async function quoteStripeTopUp (deps: Deps<'loadOptions'>, user: User, amount: number): Promise<string> {
  const q = await quote(deps, user, amount)
  return formatMinor(q.minor, q.decimals)
}

/** A refusal from Stripe (or no answer) as the payer's message; the key never appears in it. */
export function stripeFailure (deps: Deps<'log'>, err: unknown): Error {
  if (err instanceof Stripe.errors.StripeAuthenticationError) {
    deps.log.warn({ reason: 'authentication', status: err.statusCode }, 'stripe refused the secret key')
    return fail(WM.stripeAuthFailed)
  }
  if (err instanceof Stripe.errors.StripeError && err.statusCode !== undefined) {
    deps.log.warn({ reason: err.type, status: err.statusCode, code: err.code }, 'stripe refused the checkout session')
    return fail(WM.stripeRefused, { detail: err.message.slice(0, 300) })
  }
  deps.log.warn({ err }, 'stripe could not be reached')
  return fail(WM.stripeUnreachable)
}

/**
 * Creates a pending order and its Checkout Session; answers the page the browser is sent to. The
 * order fixes who is credited, how much and in which currency: a webhook can only settle it as created.
 */
export async function createStripeOrder (deps: Deps<'db' | 'log' | 'loadOptions' | 'outbound'>, user: User, body: StripePayBody): Promise<{ pay_link: string }> {
  const { options, currency, decimals, minor, quota } = await quote(deps, user, body.amount)
  const base = options.str('StripeApiBase')
  if (base !== '') await checkOutbound(deps.outbound, { url: base })
  const serverAddress = options.str('ServerAddress')
  const tradeNo = `USR${user.id}NO${randomBytes(16).toString('hex')}`
  const money = formatMinor(minor, decimals)
  await insertTopUp(deps.db, { user_id: user.id, amount: body.amount, money, quota, trade_no: tradeNo, payment_method: 'stripe', currency })
  const priceId = options.str('StripePriceId')
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: 'payment',
    client_reference_id: tradeNo,
    metadata: { trade_no: tradeNo },
    success_url: `${serverAddress}/topup?stripe=success`,
    cancel_url: `${serverAddress}/topup?stripe=cancel`,
    line_items: priceId !== ''
      ? [{ price: priceId, quantity: body.amount }]
      : [{ quantity: 1, price_data: { currency, unit_amount: Number(minor), product_data: { name: `TUC${body.amount}` } } }],
    ...(options.bool('StripePromotionCodesEnabled') ? { allow_promotion_codes: true } : {})
  }
  let session: Stripe.Checkout.Session
  try {
    session = await stripeClient(deps.outbound, options).checkout.sessions.create(params)
  } catch (err) {
    throw stripeFailure(deps, err)
  }
  if (typeof session.url !== 'string' || session.url === '') throw fail(WM.stripeUnreachable)
  await setTopUpStripeSession(deps.db, tradeNo, session.id)
  return { pay_link: session.url }
}

/** Why a webhook event was refused or skipped, for the operator's log. */
type Refusal = 'bad signature' | 'not paid' | 'unknown order' | 'session differs' | 'currency differs' | 'sum differs' | 'order closed' | 'partial refund'

/** What the webhook answers: 200 (handled, skipped or a replay), 400 (not from Stripe), 404 (not configured). */
export type WebhookOutcome = 200 | 400 | 404

export type WebhookDeps = Deps<'db' | 'log' | 'loadOptions' | 'quota' | 'publishChange' | 'outbound'>

const idOf = (ref: string | { id: string } | null | undefined): string | undefined =>
  typeof ref === 'string' ? ref : ref?.id

/**
 * Handles one webhook delivery: verified against StripeWebhookSecret on the raw body (the
 * package's own check, with its timestamp tolerance), recorded once by event id, then acted on.
 * Replays, and any number of concurrent deliveries of events for one session, credit the order
 * once: `settleTopUp`'s conditional update decides. A refusal logs its reason, never the secret.
 */
export async function handleStripeWebhook (deps: WebhookDeps, raw: Buffer, signature: string | undefined): Promise<WebhookOutcome> {
  const options = await deps.loadOptions()
  const secret = options.str('StripeWebhookSecret')
  if (secret === '') return 404
  let event: Stripe.Event
  try {
    event = Stripe.webhooks.constructEvent(raw, signature ?? '', secret)
  } catch (err) {
    const detail = err instanceof Error ? err.message.split('\n')[0]!.slice(0, 200) : 'unreadable'
    deps.log.warn({ reason: 'bad signature', detail }, 'stripe webhook refused')
    return 400
  }
  const ledger = { record: async (id: string, type: string) => await insertStripeEvent(deps.db, id, type), forget: async (id: string) => { await deleteStripeEvent(deps.db, id) } }
  await actOnce(deps, 'stripe', ledger, event, async () => { await actOn(deps, options, event) })
  return 200
}

async function actOn (deps: WebhookDeps, options: OptionValues, event: Stripe.Event): Promise<void> {
  const refuse = (reason: Refusal | string, extra: Record<string, unknown> = {}): void => {
    deps.log.warn({ event: event.id, type: event.type, reason, ...extra }, 'stripe webhook event refused')
  }
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = event.data.object
      if (session.mode === 'subscription') return await onPlanSessionCompleted(deps, options, session, refuse)
      const tradeNo = (session.client_reference_id ?? session.metadata?.['trade_no'] ?? '').slice(0, 100)
      // Delayed methods complete the session unpaid; async_payment_succeeded follows when paid.
      if (session.payment_status !== 'paid') return refuse('not paid', { trade_no: tradeNo })
      const order = tradeNo === '' ? undefined : await findTopUpByTradeNo(deps.db, tradeNo)
      if (order?.payment_method !== 'stripe' || order.currency === null) return refuse('unknown order', { trade_no: tradeNo })
      if (order.stripe_session_id !== null && order.stripe_session_id !== session.id) return refuse('session differs', { trade_no: tradeNo })
      if ((session.currency ?? '').toLowerCase() !== order.currency) return refuse('currency differs', { trade_no: tradeNo })
      if (!sumMatches(options, order, session)) return refuse('sum differs', { trade_no: tradeNo })
      const paymentIntent = idOf(session.payment_intent)
      if (paymentIntent !== undefined && order.stripe_payment_intent === null) await setTopUpStripePaymentIntent(deps.db, tradeNo, paymentIntent)
      if (order.status === 'success' || order.status === 'refunded') return
      if (order.status !== 'pending') return refuse('order closed', { trade_no: tradeNo })
      // Undefined: a concurrent delivery (or an admin's completion) settled the order first.
      await settleTopUp(deps, options, tradeNo, 'notification')
      return
    }
    case 'invoice.paid':
      return await onPlanInvoicePaid(deps, event.data.object, refuse)
    case 'charge.refunded': {
      const charge = event.data.object
      // A partial refund leaves the credit: the admin can adjust the balance by hand.
      if (!charge.refunded) return refuse('partial refund', { amount_refunded: charge.amount_refunded })
      await takeBack(deps, options, idOf(charge.payment_intent), 'refund', refuse)
      return
    }
    case 'charge.dispute.closed': {
      const dispute = event.data.object
      if (dispute.status !== 'lost') return
      await takeBack(deps, options, idOf(dispute.payment_intent), 'lost dispute', refuse)
      return
    }
    default:
  }
}

/**
 * The session paid the order's sum. With promotion codes on, a discount is the merchant's own
 * choice, so the sum before discounts is what must match.
 */
function sumMatches (options: OptionValues, order: TopUp, session: Stripe.Checkout.Session): boolean {
  const expected = parseMinor(order.money, minorDecimals(order.currency ?? ''))
  if (expected === undefined) return false
  if (session.amount_total !== null && BigInt(session.amount_total) === expected) return true
  return options.bool('StripePromotionCodesEnabled') && session.amount_subtotal !== null && BigInt(session.amount_subtotal) === expected &&
    session.amount_total !== null && session.amount_total <= session.amount_subtotal
}

/**
 * Records a refund or a lost dispute against the paid order of `paymentIntent` and, with
 * StripeRefundDeductsQuota on, takes the credited quota back. The success to refunded update
 * decides, so of any number of such events exactly one debits.
 */
async function takeBack (deps: WebhookDeps, options: OptionValues, paymentIntent: string | undefined, why: 'refund' | 'lost dispute', refuse: (reason: Refusal | string, extra?: Record<string, unknown>) => void): Promise<void> {
  if (paymentIntent === undefined) return refuse('unknown order', {})
  const order = await findTopUpByStripePaymentIntent(deps.db, paymentIntent)
  if (order === undefined) {
    // Not a top-up: perhaps an invoice of a plan's Stripe subscription.
    if (!await reversePlanPayment(deps, options, paymentIntent, why, refuse)) refuse('unknown order', { payment_intent: paymentIntent.slice(0, 100) })
    return
  }
  await refundTopUpOrder(deps, options, order, `stripe ${why}`, options.bool('StripeRefundDeductsQuota'))
}
