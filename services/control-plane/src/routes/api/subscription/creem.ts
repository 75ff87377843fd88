import { CreemPayResponse, CreemPlanPayBody } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ok } from '../../../lib/errors.js'
import { PAY_RATE_LIMIT } from '../../../lib/rate-limits.js'
import { createCreemPlanOrder } from '../../../services/creem.js'

/**
 * Buying a subscription plan through Creem (`POST /api/subscription/creem/pay`): a pending
 * subscription order and a checkout for the plan's Creem product. The console sends the browser
 * to `data.checkout_url`; Creem's webhook (/api/creem/webhook) completes the order once paid.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, log: app.log, loadOptions: app.loadOptions, outbound: app.outbound }
  app.post('/creem/pay', {
    config: { auth: 'user', rateLimit: PAY_RATE_LIMIT },
    schema: { body: CreemPlanPayBody, response: { 200: CreemPayResponse } }
  }, async (req) => ok(await createCreemPlanOrder(deps, req.auth!.user, req.body.plan_id), 'success'))
}
export default routes
