import { BILLING_PREFERENCES, type BillingPreference, DEFAULT_BILLING_PREFERENCE, type SubscriptionSelfView, type UserSubscriptionView } from '@modelgate/contracts'
import { findBillingPreference, listUserSubscriptions, setBillingPreference, setSubscriptionAutoRenew, subscriptionChainPayment, type User } from '@modelgate/db'
import { fail } from '../../lib/errors.js'
import { M } from '../../lib/messages.js'
import { SM } from '../../lib/subscription-messages.js'
import type { Deps } from '../deps.js'
import { subscriptionEntry } from './plans.js'

/** How many ended periods a user's own listing shows beside the active ones. */
export const SELF_HISTORY_LIMIT = 50

/** The caller's billing preference and subscriptions: the active ones, then the last 50 others. */
export async function subscriptionSelf (deps: Deps<'db'>, user: User): Promise<SubscriptionSelfView> {
  const [preference, subs] = await Promise.all([
    findBillingPreference(deps.db, user.id),
    listUserSubscriptions(deps.db, user.id, { historyLimit: SELF_HISTORY_LIMIT })
  ])
  return { billing_preference: preference ?? DEFAULT_BILLING_PREFERENCE, subscriptions: subs.map((e) => subscriptionEntry(e)) }
}

export const isBillingPreference = (v: string): v is BillingPreference => (BILLING_PREFERENCES as readonly string[]).includes(v)

/** Sets the caller's billing preference; the gateways reload the user. */
export async function changeBillingPreference (deps: Deps<'db' | 'publishChange'>, user: User, value: string): Promise<{ billing_preference: BillingPreference }> {
  if (!isBillingPreference(value)) throw fail(SM.badPreference)
  const saved = await setBillingPreference(deps.db, user.id, value)
  if (saved === undefined) throw fail(M.userNotFound)
  await deps.publishChange({ kind: 'user', id: user.id })
  return { billing_preference: saved }
}

/**
 * Turns auto-renewal of the caller's own active subscription on or off. Another user's
 * subscription answers exactly as a missing one.
 */
export async function changeAutoRenew (deps: Deps<'db' | 'publishChange'>, user: User, id: number, autoRenew: boolean): Promise<UserSubscriptionView> {
  // Stripe renews what a card paid for: a wallet renewal on top would charge twice.
  if (autoRenew && await subscriptionChainPayment(deps.db, id) === 'stripe') throw fail(SM.renewedByStripe)
  const sub = await setSubscriptionAutoRenew(deps.db, user.id, id, autoRenew)
  if (sub === undefined) throw fail(SM.subscriptionNotFound)
  await deps.publishChange({ kind: 'user', id: user.id })
  return subscriptionEntry({ subscription: sub, items: [] }).subscription
}
