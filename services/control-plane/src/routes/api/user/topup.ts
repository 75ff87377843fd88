import {
  CreemPayBody,
  CreemPayResponse,
  RedeemBody,
  RedeemResponse,
  StripeAmountBody,
  StripePayBody,
  StripePayResponse,
  TopUpAmountBody,
  TopUpAmountResponse,
  TopUpCompleteBody,
  TopUpCompleteResponse,
  TopUpListQuery,
  TopUpPageResponse,
  TopUpPayBody,
  TopUpPayResponse,
  TopUpSelfQuery
} from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ok } from '../../../lib/errors.js'
import { registerEpayNotify } from '../epay-notify.js'
import { PAY_RATE_LIMIT, perUserPerMinute } from '../../../lib/rate-limits.js'
import { WM } from '../../../lib/wallet-messages.js'
import { createTopUpOrder, quoteTopUp, settleEpayNotify } from '../../../services/epay.js'
import { recordAudit } from '../../../services/audit.js'
import { describeQuota, redeemCode } from '../../../services/redemptions.js'
import { completeTopUpByHand, listTopUpPage } from '../../../services/topups.js'
import { createStripeOrder, quoteStripeTopUp } from '../../../services/stripe.js'
import { createCreemOrder } from '../../../services/creem.js'

// Counted per user, not per address: one signed-in user cannot guess codes faster than this.
const REDEEM_RATE_LIMIT = perUserPerMinute(30)

/** The wallet: redeeming codes and online top-up through an epay provider (ARCHITECTURE.md "Console API conventions"). */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, log: app.log, quota: app.quota, publishChange: app.publishChange, loadOptions: app.loadOptions, outbound: app.outbound }
  app.post('/topup', {
    config: { auth: 'user', rateLimit: REDEEM_RATE_LIMIT },
    schema: { body: RedeemBody, response: { 200: RedeemResponse } }
  }, async (req) => ok(await redeemCode(deps, req.auth!.user, req.body.key), req.t(WM.redeemed)))

  // new-api's paths: every user's orders for admins, and a user's own.
  app.get('/topup', {
    config: { auth: 'admin' },
    schema: { querystring: TopUpListQuery, response: { 200: TopUpPageResponse } }
  }, async (req) => ok(await listTopUpPage(deps, req.query)))

  app.get('/topup/self', {
    config: { auth: 'user' },
    schema: { querystring: TopUpSelfQuery, response: { 200: TopUpPageResponse } }
  }, async (req) => ok(await listTopUpPage(deps, req.query, req.auth!.user.id)))

  // An order paid but never notified (the provider's callback lost): settled as a notification would.
  app.post('/topup/complete', {
    config: { auth: 'admin' },
    schema: { body: TopUpCompleteBody, response: { 200: TopUpCompleteResponse } }
  }, async (req) => {
    const order = await completeTopUpByHand(deps, req.auth!.user, req.body.trade_no, async (trx, done) => {
      await recordAudit(deps, req, {
        action: 'topup.complete',
        targetType: 'topup',
        targetId: done.trade_no,
        before: { status: 'pending', complete_time: 0 },
        after: { status: done.status, complete_time: done.complete_time },
        note: `order ${done.id} of user ${done.user_id}: paid ${done.money}, credited ${done.quota} quota`
      }, trx)
    })
    const quota = describeQuota(await app.loadOptions(), order.quota)
    return ok(order, req.t(WM.topUpCompleted, { quota, username: order.username }))
  })

  app.post('/amount', {
    config: { auth: 'user' },
    schema: { body: TopUpAmountBody, response: { 200: TopUpAmountResponse } }
  }, async (req) => ok(await quoteTopUp(deps, req.auth!.user, req.body.amount)))

  // The console posts `data` as a form to `url`, the provider's payment page.
  app.post('/pay', {
    config: { auth: 'user', rateLimit: PAY_RATE_LIMIT },
    schema: { body: TopUpPayBody, response: { 200: TopUpPayResponse } }
  }, async (req) => {
    const { fields, url } = await createTopUpOrder(deps, req.auth!.user, req.body)
    return { success: true, message: 'success', data: fields, url }
  })

  // Card payment through Stripe Checkout (new-api's paths); the webhook is /api/stripe/webhook.
  app.post('/stripe/amount', {
    config: { auth: 'user' },
    schema: { body: StripeAmountBody, response: { 200: TopUpAmountResponse } }
  }, async (req) => ok(await quoteStripeTopUp(deps, req.auth!.user, req.body.amount)))

  // The console sends the browser to `data.pay_link`, Stripe's hosted payment page.
  app.post('/stripe/pay', {
    config: { auth: 'user', rateLimit: PAY_RATE_LIMIT },
    schema: { body: StripePayBody, response: { 200: StripePayResponse } }
  }, async (req) => ok(await createStripeOrder(deps, req.auth!.user, req.body), 'success'))

  // One of the CreemProducts through Creem's checkout (new-api's path); the webhook is /api/creem/webhook.
  // The console sends the browser to `data.checkout_url` (`pay_link` holds the same page).
  app.post('/creem/pay', {
    config: { auth: 'user', rateLimit: PAY_RATE_LIMIT },
    schema: { body: CreemPayBody, response: { 200: CreemPayResponse } }
  }, async (req) => ok(await createCreemOrder(deps, req.auth!.user, req.body), 'success'))

  await registerEpayNotify(app, '/epay/notify', async (params) => await settleEpayNotify(deps, params), 'epay notification refused')
}
export default routes
