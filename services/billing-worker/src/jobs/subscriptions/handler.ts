import { LOG_TYPE, type OptionValues, quotaPrice } from '@modelgate/contracts'
import { activateSubscription, type Database, debitUserQuota, insertLog, type Kysely, lockUserForDebit, subscriptionChainPayment, userSubscriptionItemIds } from '@modelgate/db'
import type { QuotaStore } from '@modelgate/quota'

export interface SubscriptionPeriodsDeps {
  db: Kysely<Database>
  quota: QuotaStore
  options: () => Promise<OptionValues>
  /** Tells every gateway that a user's subscriptions changed (their cached records are dropped). */
  announce: (userId: number) => Promise<void>
  /** Now, unix seconds (tests). */
  now?: () => number
}

export interface SubscriptionPeriodsResult { expired: number, renewed: number }

/** Periods handled per run; more wait for the next minute. */
const BATCH = 500
/** A renewal continues the period it follows unless that ended longer ago than this (the worker was down): then it starts now. */
const CONTINUE_WITHIN_S = 86_400

/**
 * Expires every active subscription whose end has passed; one set to renew whose plan is still
 * enabled starts its next period in the same transaction, paid from the wallet when the balance
 * covers the plan's price (a log row says so); otherwise it just ends. Each period is handled
 * under a row lock and only while still active, and a period is renewed at most once (unique
 * renewed_from), so concurrent or repeated runs change nothing twice. The ended items' cached
 * balances are dropped and the gateways told.
 */
export async function run (deps: SubscriptionPeriodsDeps): Promise<SubscriptionPeriodsResult> {
  const now = deps.now?.() ?? Math.floor(Date.now() / 1000)
  const due = await deps.db.selectFrom('user_subscriptions').select('id')
    .where('status', '=', 'active').where('end_time', '<=', now).orderBy('end_time').limit(BATCH).execute()
  const result: SubscriptionPeriodsResult = { expired: 0, renewed: 0 }
  if (due.length === 0) return result
  const options = await deps.options()
  for (const { id } of due) {
    const done = await deps.db.transaction().execute(async (trx) => {
      const sub = await trx.selectFrom('user_subscriptions').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
      if (sub === undefined || sub.status !== 'active' || sub.end_time > now) return undefined
      await trx.updateTable('user_subscriptions').set({ status: 'expired', updated_at: now }).where('id', '=', id).execute()
      const items = await userSubscriptionItemIds(trx, id)
      // A chain a card paid for is renewed by Stripe's invoices, never from the wallet too.
      if (!sub.auto_renew || await subscriptionChainPayment(trx, id) === 'stripe') return { sub, items, charged: 0 }
      const plan = await trx.selectFrom('subscription_plans').select(['enabled', 'title', 'price_minor']).where('id', '=', sub.plan_id).executeTakeFirst()
      if (plan === undefined || !plan.enabled) return { sub, items, charged: 0 }
      const price = quotaPrice(options, plan)
      const user = await lockUserForDebit(trx, sub.user_id)
      if (user === undefined || user.quota < price) return { sub, items, charged: 0 }
      await debitUserQuota(trx, sub.user_id, price)
      const start = now - sub.end_time <= CONTINUE_WITHIN_S ? sub.end_time : now
      const next = await activateSubscription(trx, { userId: sub.user_id, planId: sub.plan_id, source: 'renewal', renewedFrom: sub.id, startTime: start, autoRenew: true })
      // Written as a wallet purchase of a plan is: a system row with the price taken.
      await insertLog(trx, {
        type: LOG_TYPE.system,
        user_id: sub.user_id,
        username: user.username,
        quota: price,
        content: `subscription renewed: plan ${plan.title} until ${new Date(next.subscription.end_time * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC, paid from the balance`,
        other: { billing_source: 'wallet', subscription_id: next.subscription.id, plan_id: sub.plan_id, plan_title: plan.title, quota_price: price }
      })
      return { sub, items, charged: price }
    })
    if (done === undefined) continue
    result.expired++
    if (done.charged > 0) {
      result.renewed++
      await deps.quota.adjust('user', done.sub.user_id, -done.charged)
    }
    await deps.quota.forget('entitlement', done.items, done.sub.user_id)
    await deps.announce(done.sub.user_id)
  }
  return result
}
