import { StripePayResponse, SubscriptionBalancePayBody } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ok } from '../../../lib/errors.js'
import { PAY_RATE_LIMIT } from '../../../lib/rate-limits.js'
import { createStripePlanOrder } from '../../../services/stripe-plans.js'

/**
 * Buying a subscription plan by card (`POST /api/subscription/stripe/pay` with `{plan_id}`): a
 * pending order and a Stripe Checkout Session in subscription mode on the plan's Stripe Price.
 * The console sends the browser to `data.pay_link`; the Stripe webhook completes the order once
 * paid and starts a period for each later paid invoice.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, log: app.log, loadOptions: app.loadOptions, outbound: app.outbound }
  app.post('/stripe/pay', {
    config: { auth: 'user', rateLimit: PAY_RATE_LIMIT },
    schema: { body: SubscriptionBalancePayBody, response: { 200: StripePayResponse } }
  }, async (req) => ok(await createStripePlanOrder(deps, req.auth!.user, req.body.plan_id), 'success'))
}
export default routes
