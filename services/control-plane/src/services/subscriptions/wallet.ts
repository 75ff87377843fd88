import { LOG_TYPE, quotaPrice, type UserSubscriptionEntry } from '@modelgate/contracts'
import {
  activateSubscription,
  debitUserQuota,
  findSubscriptionPlan,
  insertLog,
  insertSubscriptionOrder,
  lockUserForDebit,
  type User
} from '@modelgate/db'
import { fail } from '../../lib/errors.js'
import { M } from '../../lib/messages.js'
import { SM } from '../../lib/subscription-messages.js'
import type { Deps } from '../deps.js'
import { describeQuota } from '../redemptions.js'
import { subscriptionEntry } from './plans.js'
import { subscriptionTradeNo } from './orders.js'

/**
 * Buys one period of an enabled plan from the wallet: in one transaction the user's row is locked
 * (SELECT ... FOR UPDATE, so concurrent purchases run one after another and each sees what the
 * previous left), the plan's price in quota units is taken (refused when the balance is short),
 * a paid 'balance' order, the subscription with its items and a log row are written; then the
 * cached balance the gateways spend from moves by the same amount and the gateways reload the
 * user's entitlements. Of N concurrent purchases against a balance covering k, exactly k succeed.
 */
export async function buyPlanWithBalance (deps: Deps<'db' | 'loadOptions' | 'quota' | 'publishChange'>, user: User, planId: number): Promise<UserSubscriptionEntry> {
  const options = await deps.loadOptions()
  const found = await findSubscriptionPlan(deps.db, planId)
  if (found === undefined || !found.plan.enabled) throw fail(SM.planUnavailable)
  const price = quotaPrice(options, found.plan)
  if (!Number.isSafeInteger(price) || price < 0) throw fail(SM.priceOutOfRange)

  const started = await deps.db.transaction().execute(async (trx) => {
    const payer = await lockUserForDebit(trx, user.id)
    if (payer === undefined) throw fail(M.userNotFound)
    const short = () => {
      // In quota units when the display would round the two to the same amount.
      const balance = Math.max(0, payer.quota)
      const [p, b] = [describeQuota(options, price), describeQuota(options, balance)]
      return fail(SM.balanceShort, p === b ? { price, balance } : { price: p, balance: b })
    }
    if (payer.quota < price) throw short()
    const debited = await debitUserQuota(trx, user.id, price)
    if (debited === undefined) throw short()
    const tradeNo = subscriptionTradeNo(user.id)
    const order = await insertSubscriptionOrder(trx, {
      user_id: user.id,
      plan_id: found.plan.id,
      price_minor: found.plan.price_minor,
      currency: found.plan.currency,
      trade_no: tradeNo,
      payment_method: 'balance',
      status: 'success',
      complete_time: Math.floor(Date.now() / 1000)
    })
    const sub = await activateSubscription(trx, { userId: user.id, planId: found.plan.id, source: 'order', orderId: order.id })
    await insertLog(trx, {
      type: LOG_TYPE.system,
      user_id: user.id,
      username: debited.username,
      quota: price,
      content: `bought plan ${sub.subscription.plan_title} for ${describeQuota(options, price)} from the balance (order ${tradeNo})`,
      other: { billing_source: 'wallet', subscription_id: sub.subscription.id, plan_id: found.plan.id, plan_title: sub.subscription.plan_title, quota_price: price }
    })
    return sub
  })
  await deps.quota.adjust('user', user.id, -price)
  await deps.publishChange({ kind: 'user', id: user.id })
  return subscriptionEntry(started)
}
