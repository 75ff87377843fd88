import { LOG_TYPE, type OptionValues } from '@modelgate/contracts'
import { activateSubscription, deleteStripeEvent, findSubscriptionOrderByTradeNo, findSubscriptionPlan, findUserById, insertLog, insertStripeEvent, insertSubscriptionOrder, type User } from '@modelgate/db'
import type Stripe from 'stripe'
import { fail } from '../lib/errors.js'
import { checkOutbound } from '../lib/outbound.js'
import { SM } from '../lib/subscription-messages.js'
import { WM } from '../lib/wallet-messages.js'
import type { Deps } from './deps.js'
import { stripeClient, stripeFailure, stripeTopUpReady, type WebhookDeps } from './stripe.js'
import { completeSubscriptionOrder, refundSubscriptionOrder, subscriptionTradeNo } from './subscriptions/orders.js'

/*
 * Plans bought through Stripe Billing: a Checkout Session in subscription mode on the plan's
 * Stripe Price (`stripe_price_id`). Its first payment completes the order (one period, as any
 * purchase); each later paid invoice of the Stripe subscription starts the next period. Stripe
 * renews, so such a period never renews from the wallet. Cancelling in Stripe stops the invoices:
 * the current period runs to its end.
 */

/** Creates a pending plan order and its Checkout Session; answers the page the browser is sent to. */
export async function createStripePlanOrder (deps: Deps<'db' | 'log' | 'loadOptions' | 'outbound'>, user: User, planId: number): Promise<{ pay_link: string }> {
  const options = await deps.loadOptions()
  if (!stripeTopUpReady(options)) throw fail(WM.stripeTopUpDisabled)
  const found = await findSubscriptionPlan(deps.db, planId)
  if (found === undefined) throw fail(SM.planNotFound)
  const { plan } = found
  if (!plan.enabled) throw fail(SM.planUnavailable)
  if (plan.stripe_price_id === '') throw fail(SM.stripeNotForPlan)
  const base = options.str('StripeApiBase')
  if (base !== '') await checkOutbound(deps.outbound, { url: base })
  const tradeNo = subscriptionTradeNo(user.id)
  await insertSubscriptionOrder(deps.db, { user_id: user.id, plan_id: plan.id, price_minor: plan.price_minor, currency: plan.currency, trade_no: tradeNo, payment_method: 'stripe' })
  const serverAddress = options.str('ServerAddress')
  let session: Stripe.Checkout.Session
  try {
    session = await stripeClient(deps.outbound, options).checkout.sessions.create({
      mode: 'subscription',
      client_reference_id: tradeNo,
      metadata: { trade_no: tradeNo, kind: 'plan' },
      // Every invoice of the subscription carries the order's trade number.
      subscription_data: { metadata: { trade_no: tradeNo } },
      line_items: [{ price: plan.stripe_price_id, quantity: 1 }],
      success_url: `${serverAddress}/plans?stripe=success`,
      cancel_url: `${serverAddress}/plans?stripe=cancel`,
      ...(options.bool('StripePromotionCodesEnabled') ? { allow_promotion_codes: true } : {})
    })
  } catch (err) {
    throw stripeFailure(deps, err)
  }
  if (typeof session.url !== 'string' || session.url === '') throw fail(WM.stripeUnreachable)
  return { pay_link: session.url }
}

type Refuse = (reason: string, extra?: Record<string, unknown>) => void

const idOf = (ref: string | { id: string } | null | undefined): string | undefined => typeof ref === 'string' ? ref : ref?.id

/**
 * A completed subscription-mode session: the plan order it names is completed once (whatever
 * the deliveries), with the Stripe subscription's id kept on the order for its later invoices.
 */
export async function onPlanSessionCompleted (deps: WebhookDeps, options: OptionValues, session: Stripe.Checkout.Session, refuse: Refuse): Promise<void> {
  const tradeNo = (session.client_reference_id ?? session.metadata?.['trade_no'] ?? '').slice(0, 100)
  if (session.payment_status !== 'paid') return refuse('not paid', { trade_no: tradeNo })
  const order = tradeNo === '' ? undefined : await findSubscriptionOrderByTradeNo(deps.db, tradeNo)
  if (order?.payment_method !== 'stripe') return refuse('unknown order', { trade_no: tradeNo })
  if ((session.currency ?? '').toLowerCase() !== order.currency.toLowerCase()) return refuse('currency differs', { trade_no: tradeNo })
  // The first invoice is the plan's price; a discount is the merchant's own choice (promotion codes).
  const paid = session.amount_total ?? -1
  const before = session.amount_subtotal ?? -1
  if (paid !== order.price_minor && !(options.bool('StripePromotionCodesEnabled') && before === order.price_minor && paid <= before)) {
    return refuse('sum differs', { trade_no: tradeNo })
  }
  if (order.status === 'success') return
  if (order.status !== 'pending') return refuse('order closed', { trade_no: tradeNo })
  await completeSubscriptionOrder(deps, tradeNo, 'notification', idOf(session.subscription))
}

/**
 * A paid renewal invoice of a plan's Stripe subscription: the latest period of the order's chain
 * is continued by a new one (fresh items). The invoice is recorded once (beside the event ids)
 * and a period is renewed once (unique renewed_from), so redeliveries change nothing.
 */
export async function onPlanInvoicePaid (deps: WebhookDeps, invoice: Stripe.Invoice, refuse: Refuse): Promise<void> {
  if (invoice.billing_reason !== 'subscription_cycle') return
  const details = invoice.parent?.subscription_details
  const tradeNo = String(details?.metadata?.['trade_no'] ?? '').slice(0, 100)
  const order = tradeNo === '' ? undefined : await findSubscriptionOrderByTradeNo(deps.db, tradeNo)
  if (order?.payment_method !== 'stripe' || order.status !== 'success') return refuse('unknown order', { trade_no: tradeNo })
  if (order.provider_ref !== null && order.provider_ref !== idOf(details?.subscription)) return refuse('subscription differs', { trade_no: tradeNo })
  if ((invoice.currency ?? '').toLowerCase() !== order.currency.toLowerCase()) return refuse('currency differs', { trade_no: tradeNo })
  // One period per invoice, whichever events announce it.
  const once = `renewal:${String(invoice.id)}`
  if (!await insertStripeEvent(deps.db, once, 'invoice.paid')) return
  const now = Math.floor(Date.now() / 1000)
  const renewed = await deps.db.transaction().execute(async (trx) => {
    let latest = await trx.selectFrom('user_subscriptions').selectAll().where('order_id', '=', order.id).forUpdate().executeTakeFirst()
    if (latest === undefined) return undefined
    for (;;) {
      const next = await trx.selectFrom('user_subscriptions').selectAll().where('renewed_from', '=', latest.id).forUpdate().executeTakeFirst()
      if (next === undefined) break
      latest = next
    }
    // The new period continues the last one, or starts now if that ended over a day ago.
    const start = latest.end_time >= now - 86_400 ? Math.max(latest.end_time, latest.start_time) : now
    const started = await activateSubscription(trx, { userId: order.user_id, planId: order.plan_id, source: 'renewal', renewedFrom: latest.id, startTime: start })
    const user = await findUserById(trx, order.user_id)
    await insertLog(trx, {
      type: LOG_TYPE.system,
      user_id: order.user_id,
      username: user?.username ?? '',
      quota: 0,
      content: `subscription renewed by Stripe: plan ${started.subscription.plan_title}, invoice ${String(invoice.id).slice(0, 100)} (order ${tradeNo})`,
      other: { billing_source: 'order', subscription_id: started.subscription.id, plan_title: started.subscription.plan_title, trade_no: tradeNo }
    })
    return started
  }).catch(async (err: unknown) => {
    // Forgotten, so Stripe's retry renews once the cause is gone.
    await deleteStripeEvent(deps.db, once)
    throw err
  })
  if (renewed === undefined) return refuse('no subscription for the order', { trade_no: tradeNo })
  await deps.publishChange({ kind: 'user', id: order.user_id })
}

/**
 * A refund or a lost dispute of a payment that is not a top-up's: when Stripe says the payment
 * paid an invoice of a plan's Stripe subscription (its invoice payments, looked up by payment
 * intent), the plan order is marked refunded once and, with StripeRefundDeductsQuota on, its
 * subscription ends now (every period of the chain, as a Creem plan refund does). False when the
 * payment paid no invoice of ours. A Stripe that cannot be asked throws, so the event is retried.
 */
export async function reversePlanPayment (deps: WebhookDeps, options: OptionValues, paymentIntent: string, why: 'refund' | 'lost dispute', refuse: Refuse): Promise<boolean> {
  let invoice: Stripe.Invoice | string | undefined
  try {
    const payments = await stripeClient(deps.outbound, options).invoicePayments.list({ payment: { type: 'payment_intent', payment_intent: paymentIntent }, expand: ['data.invoice'], limit: 1 })
    invoice = payments.data[0]?.invoice as Stripe.Invoice | string | undefined
  } catch (err) {
    // Not a console error answered 200: the webhook must fail, so Stripe delivers the event again.
    deps.log.warn({ err, payment_intent: paymentIntent.slice(0, 100) }, 'stripe could not be asked which invoice a refunded payment paid')
    throw new Error('stripe could not say which invoice a refunded payment paid', { cause: err })
  }
  if (invoice === undefined || typeof invoice === 'string') return false
  const details = invoice.parent?.subscription_details
  const tradeNo = String(details?.metadata?.['trade_no'] ?? '').slice(0, 100)
  const order = tradeNo === '' ? undefined : await findSubscriptionOrderByTradeNo(deps.db, tradeNo)
  if (order?.payment_method !== 'stripe') return false
  if (order.provider_ref !== null && order.provider_ref !== idOf(details?.subscription)) {
    refuse('subscription differs', { trade_no: tradeNo })
    return true
  }
  if (order.status === 'refunded') return true
  if (order.status !== 'success') {
    refuse('order closed', { trade_no: tradeNo })
    return true
  }
  await refundSubscriptionOrder(deps, tradeNo, 'stripe', options.bool('StripeRefundDeductsQuota'), why)
  return true
}
