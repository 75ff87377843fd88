import {
  AutoRenewBody,
  BillingPreferenceBody,
  BillingPreferenceResponse,
  SubscriptionBalancePayBody,
  SubscriptionEpayPayBody,
  SubscriptionIdParams,
  SubscriptionPlanOfferListResponse,
  SubscriptionSelfResponse,
  TopUpPayResponse,
  UserSubscriptionEntryResponse,
  UserSubscriptionResponse
} from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ok } from '../../../lib/errors.js'
import { registerEpayNotify } from '../epay-notify.js'
import { PAY_RATE_LIMIT } from '../../../lib/rate-limits.js'
import { SM } from '../../../lib/subscription-messages.js'
import { createSubscriptionEpayOrder, settleSubscriptionEpayNotify } from '../../../services/subscriptions/orders.js'
import { listPlanOffers } from '../../../services/subscriptions/plans.js'
import { changeAutoRenew, changeBillingPreference, subscriptionSelf } from '../../../services/subscriptions/self.js'
import { buyPlanWithBalance } from '../../../services/subscriptions/wallet.js'
import adminRoutes from './admin.js'
import creemRoutes from './creem.js'
import stripeRoutes from './stripe.js'

/**
 * Subscription plans (docs/domain.md, "Subscription plans"): the plans on sale, the caller's
 * subscriptions and billing preference, purchases from the wallet or through epay (by card and
 * Creem in `stripe.ts` and `creem.ts`), and under `/admin` the admins' plan management, binding and
 * invalidation.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, log: app.log, quota: app.quota, publishChange: app.publishChange, loadOptions: app.loadOptions }
  await app.register(adminRoutes, { prefix: '/admin' })
  await app.register(stripeRoutes)
  await app.register(creemRoutes)

  app.get('/plans', {
    config: { auth: 'user' },
    schema: { response: { 200: SubscriptionPlanOfferListResponse } }
  }, async () => ok(await listPlanOffers(deps)))

  app.get('/self', {
    config: { auth: 'user' },
    schema: { response: { 200: SubscriptionSelfResponse } }
  }, async (req) => ok(await subscriptionSelf(deps, req.auth!.user)))

  app.put('/self/preference', {
    config: { auth: 'user' },
    schema: { body: BillingPreferenceBody, response: { 200: BillingPreferenceResponse } }
  }, async (req) => ok(await changeBillingPreference(deps, req.auth!.user, req.body.billing_preference), req.t(SM.preferenceSaved)))

  app.put('/self/:id/auto_renew', {
    config: { auth: 'user' },
    schema: { params: SubscriptionIdParams, body: AutoRenewBody, response: { 200: UserSubscriptionResponse } }
  }, async (req) => {
    const sub = await changeAutoRenew(deps, req.auth!.user, req.params.id, req.body.auto_renew)
    return ok(sub, req.t(req.body.auto_renew ? SM.autoRenewOn : SM.autoRenewOff))
  })

  app.post('/balance/pay', {
    config: { auth: 'user', rateLimit: PAY_RATE_LIMIT },
    schema: { body: SubscriptionBalancePayBody, response: { 200: UserSubscriptionEntryResponse } }
  }, async (req) => {
    const entry = await buyPlanWithBalance(deps, req.auth!.user, req.body.plan_id)
    return ok(entry, req.t(SM.purchased, { plan: entry.subscription.plan_title }))
  })

  // The console posts `data` as a form to `url`, the provider's payment page (as for a top-up).
  app.post('/epay/pay', {
    config: { auth: 'user', rateLimit: PAY_RATE_LIMIT },
    schema: { body: SubscriptionEpayPayBody, response: { 200: TopUpPayResponse } }
  }, async (req) => {
    const { fields, url } = await createSubscriptionEpayOrder(deps, req.auth!.user, req.body)
    return { success: true, message: 'success', data: fields, url }
  })

  await registerEpayNotify(app, '/epay/notify', async (params) => await settleSubscriptionEpayNotify(deps, params), 'epay subscription notification refused')
}
export default routes
