import { randomBytes } from 'node:crypto'
import { LOG_TYPE, type SubscriptionEpayPayBody } from '@modelgate/contracts'
import {
  activateSubscription,
  type Database,
  findSubscriptionOrderByTradeNo,
  findSubscriptionPlan,
  findUserById,
  insertLog,
  insertSubscriptionOrder,
  markSubscriptionOrderExpired,
  markSubscriptionOrderPaid,
  refundSubscriptionOrderRow,
  type SubscriptionOrder,
  type SubscriptionWithItems,
  type Transaction,
  type User
} from '@modelgate/db'
import { fail } from '../../lib/errors.js'
import { SM } from '../../lib/subscription-messages.js'
import type { Deps } from '../deps.js'
import { checkNotify, EPAY_TYPE, type EpayParams, epaySettings, epaySign, formatCents, parseCents, type Refusal } from '../epay.js'

/** What a completed order produced. */
export interface CompletedSubscriptionOrder extends SubscriptionWithItems {
  order: SubscriptionOrder
}

/** A fresh trade number for `userId`'s order (the provider echoes it back). */
export const subscriptionTradeNo = (userId: number): string => `SUB${userId}NO${randomBytes(16).toString('hex')}`

/**
 * Completes the pending order `tradeNo` as paid and starts its subscription: the pending to
 * success update, the user subscription with its copied items and a log row in one transaction,
 * then the announcement that makes the gateways reload the user's entitlements. The one path from
 * a payment to a subscription, for every provider's notification (epay, Stripe, Creem) and an
 * admin's completion alike: the conditional update decides, so of any number of calls (concurrent
 * or not, on any replica) exactly one activates. Returns what it produced, or undefined when the
 * order was not pending (completed meanwhile, closed, or unknown). `providerRef` is stored on the
 * order (the provider's own reference); `within` runs inside the transaction (an audit entry).
 */
export async function completeSubscriptionOrder (
  deps: Deps<'db' | 'publishChange'>,
  tradeNo: string,
  by: 'notification' | { admin: string },
  providerRef?: string,
  within?: (trx: Transaction<Database>, done: CompletedSubscriptionOrder) => Promise<void>
): Promise<CompletedSubscriptionOrder | undefined> {
  const done = await deps.db.transaction().execute(async (trx) => {
    const order = await markSubscriptionOrderPaid(trx, tradeNo, Math.floor(Date.now() / 1000), providerRef)
    if (order === undefined) return undefined
    const user = await findUserById(trx, order.user_id)
    // Rolling back keeps the order pending, so a retry can complete it once resolved.
    if (user === undefined) throw new Error(`paid subscription order ${tradeNo} belongs to user ${order.user_id}, who no longer exists`)
    const started = await activateSubscription(trx, { userId: order.user_id, planId: order.plan_id, source: 'order', orderId: order.id })
    const how = by === 'notification' ? '' : `, completed by admin ${by.admin}`
    await insertLog(trx, {
      type: LOG_TYPE.system,
      user_id: order.user_id,
      username: user.username,
      quota: 0,
      content: `bought plan ${started.subscription.plan_title}: paid ${formatCents(BigInt(order.price_minor))} ${order.currency} by ${order.payment_method} (order ${tradeNo}${how})`,
      other: { billing_source: 'order', subscription_id: started.subscription.id, plan_id: order.plan_id, plan_title: started.subscription.plan_title, trade_no: tradeNo }
    })
    const result = { order, ...started }
    await within?.(trx, result)
    return result
  })
  if (done === undefined) return undefined
  await deps.publishChange({ kind: 'user', id: done.order.user_id })
  return done
}

/**
 * Records a refund (or a lost dispute) of the paid plan order `tradeNo` by `provider`: the order
 * becomes `refunded` once, whatever the deliveries, and with `endPeriods` (the provider's
 * RefundDeductsQuota option) the periods it paid for end now (their items' cached balances
 * dropped); a log row says which. True when this call recorded it.
 */
export async function refundSubscriptionOrder (deps: Deps<'db' | 'quota' | 'publishChange'>, tradeNo: string, provider: string, endPeriods: boolean, why: 'refund' | 'lost dispute' = 'refund'): Promise<boolean> {
  const done = await deps.db.transaction().execute(async (trx) => {
    const refunded = await refundSubscriptionOrderRow(trx, tradeNo, endPeriods)
    if (refunded === undefined) return undefined
    const { order } = refunded
    await insertLog(trx, {
      type: LOG_TYPE.system,
      user_id: order.user_id,
      username: (await findUserById(trx, order.user_id))?.username ?? '',
      quota: 0,
      content: `${provider} ${why}: plan order ${tradeNo} (${formatCents(BigInt(order.price_minor))} ${order.currency}) ${endPeriods ? 'refunded, its subscription ended' : 'marked refunded, subscription kept'}`,
      other: { billing_source: 'order', plan_id: order.plan_id, trade_no: tradeNo }
    })
    return refunded
  })
  if (done === undefined) return false
  await deps.quota.forget('entitlement', done.itemIds, done.order.user_id)
  await deps.publishChange({ kind: 'user', id: done.order.user_id })
  return true
}

/**
 * Marks the pending order `tradeNo` expired (its checkout lapsed unpaid); undefined when it was
 * not pending. Announced like every change of a user's subscriptions.
 */
export async function expireSubscriptionOrder (deps: Deps<'db' | 'publishChange'>, tradeNo: string): Promise<SubscriptionOrder | undefined> {
  const order = await markSubscriptionOrderExpired(deps.db, tradeNo)
  if (order !== undefined) await deps.publishChange({ kind: 'user', id: order.user_id })
  return order
}

/**
 * Creates a pending epay order for an enabled plan and the signed form the console posts to the
 * payment provider (the same shape as an online top-up's). The order fixes the plan, the payer
 * and the sum: a notification can only complete it as created. Refused while epay is not configured.
 */
export async function createSubscriptionEpayOrder (deps: Deps<'db' | 'loadOptions'>, user: User, body: SubscriptionEpayPayBody): Promise<{ fields: EpayParams, url: string }> {
  const options = await deps.loadOptions()
  const settings = epaySettings(options)
  const found = await findSubscriptionPlan(deps.db, body.plan_id)
  if (found === undefined || !found.plan.enabled) throw fail(SM.planUnavailable)
  const plan = found.plan
  if (plan.price_minor < 1) throw fail(SM.epayTooLow)
  const type = EPAY_TYPE[body.payment_method]
  const money = formatCents(BigInt(plan.price_minor))
  const tradeNo = subscriptionTradeNo(user.id)
  await insertSubscriptionOrder(deps.db, { user_id: user.id, plan_id: plan.id, price_minor: plan.price_minor, currency: plan.currency, trade_no: tradeNo, payment_method: `epay:${type}` })
  const fields: EpayParams = {
    pid: settings.pid,
    type,
    out_trade_no: tradeNo,
    notify_url: `${settings.callbackAddress}/api/subscription/epay/notify`,
    return_url: `${settings.serverAddress}/plans`,
    name: `SUB${plan.id}`,
    money,
    sign_type: 'MD5'
  }
  fields['sign'] = epaySign(fields, settings.key)
  return { fields, url: `${settings.payAddress}/submit.php` }
}

/**
 * Handles an epay notification for a subscription order: true when it is genuine and its order
 * is paid (now or before), false otherwise (the reason logged, never the key). Verified as a
 * top-up's notification is (signature, merchant, status), then the signed sum must equal the
 * order's; the order completes once however often and concurrently the provider repeats it.
 */
export async function settleSubscriptionEpayNotify (deps: Deps<'db' | 'log' | 'loadOptions' | 'publishChange'>, params: EpayParams): Promise<boolean> {
  const options = await deps.loadOptions()
  const tradeNo = params['out_trade_no'] ?? ''
  const refuse = (reason: Refusal): false => {
    deps.log.warn({ out_trade_no: tradeNo.slice(0, 100), reason }, 'epay subscription notification refused')
    return false
  }
  const refusal = checkNotify(params, options.str('EpayId'), options.str('EpayKey'))
  if (refusal !== undefined) return refuse(refusal)
  const order = await findSubscriptionOrderByTradeNo(deps.db, tradeNo)
  if (order === undefined || !order.payment_method.startsWith('epay')) return refuse('unknown order')
  const paid = parseCents(params['money'] ?? '')
  if (paid === undefined || paid !== BigInt(order.price_minor)) return refuse('sum differs')
  if (order.status === 'success') return true
  if (order.status !== 'pending') return refuse('order closed')
  const providerRef = params['trade_no']
  const done = await completeSubscriptionOrder(deps, tradeNo, 'notification', providerRef === undefined || providerRef === '' ? undefined : providerRef.slice(0, 200))
  // Undefined: a concurrent notification (or an admin) completed the order first.
  if (done === undefined) return (await findSubscriptionOrderByTradeNo(deps.db, tradeNo))?.status === 'success'
  return true
}
