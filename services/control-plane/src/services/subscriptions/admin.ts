import type { UserSubscriptionEntry } from '@modelgate/contracts'
import {
  activateSubscription,
  cancelUserSubscription,
  type Database,
  findSubscriptionPlan,
  findUserSubscription,
  findUserById,
  listUserSubscriptions,
  type SubscriptionWithItems,
  type Transaction,
  type User
} from '@modelgate/db'
import { fail } from '../../lib/errors.js'
import { M } from '../../lib/messages.js'
import { SM } from '../../lib/subscription-messages.js'
import type { Deps } from '../deps.js'
import { subscriptionEntry } from './plans.js'

type Within = (trx: Transaction<Database>, done: SubscriptionWithItems) => Promise<void>

/**
 * Gives `userId` one period of a plan without payment (source 'admin'), enabled or not; `within`
 * runs in the transaction (the audit entry). The gateways reload the user.
 */
export async function bindPlan (deps: Deps<'db' | 'publishChange'>, userId: number, planId: number, within?: Within): Promise<{ entry: UserSubscriptionEntry, user: User }> {
  const user = await findUserById(deps.db, userId)
  if (user === undefined) throw fail(M.userNotFound)
  if (await findSubscriptionPlan(deps.db, planId) === undefined) throw fail(SM.planNotFound)
  const started = await deps.db.transaction().execute(async (trx) => {
    const sub = await activateSubscription(trx, { userId, planId, source: 'admin' })
    await within?.(trx, sub)
    return sub
  })
  await deps.publishChange({ kind: 'user', id: userId })
  return { entry: subscriptionEntry(started), user }
}

/** Every subscription of a user (admins): active first, then by end time descending. */
export async function listSubscriptionsOfUser (deps: Deps<'db'>, userId: number): Promise<UserSubscriptionEntry[]> {
  if (await findUserById(deps.db, userId) === undefined) throw fail(M.userNotFound)
  return (await listUserSubscriptions(deps.db, userId)).map((e) => subscriptionEntry(e))
}

/**
 * Ends an active subscription now (status 'cancelled'). After the commit the cached balances of
 * its items are dropped and the gateways reload the user, so nothing more is paid from them.
 */
export async function invalidateSubscription (deps: Deps<'db' | 'quota' | 'publishChange'>, id: number, within?: Within): Promise<UserSubscriptionEntry> {
  const cancelled = await deps.db.transaction().execute(async (trx) => {
    const done = await cancelUserSubscription(trx, id)
    if (done === undefined) throw fail(await findUserSubscription(trx, id) === undefined ? SM.subscriptionNotFound : SM.subscriptionNotActive)
    await within?.(trx, done)
    return done
  })
  await deps.quota.forget('entitlement', cancelled.items.map((i) => i.id), cancelled.subscription.user_id)
  await deps.publishChange({ kind: 'user', id: cancelled.subscription.user_id })
  return subscriptionEntry(cancelled)
}
