import formbody from '@fastify/formbody'
import {
  RedeemBody,
  RedeemResponse,
  TopUpAmountBody,
  TopUpAmountResponse,
  TopUpPayBody,
  TopUpPayResponse
} from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { ok } from '../../../lib/errors.js'
import { WM } from '../../../lib/wallet-messages.js'
import { createTopUpOrder, epayNotifyEnabled, type EpayParams, quoteTopUp, settleEpayNotify } from '../../../services/epay.js'
import { redeemCode } from '../../../services/redemptions.js'

// Counted per user, not per address: one signed-in user cannot guess codes faster than this.
const perUser = (req: FastifyRequest): string => `u${req.auth?.user.id ?? req.ip}`
const REDEEM_RATE_LIMIT = { max: 30, timeWindow: '1 minute', keyGenerator: perUser }
const PAY_RATE_LIMIT = { max: 20, timeWindow: '1 minute', keyGenerator: perUser }

/** Notification parameters as strings; undefined when a name repeats or a value is not text. */
function notifyParams (source: unknown): EpayParams | undefined {
  if (typeof source !== 'object' || source === null) return {}
  const entries = Object.entries(source)
  if (entries.some(([, v]) => typeof v !== 'string')) return undefined
  return Object.fromEntries(entries) as EpayParams
}

/** The wallet: redeeming codes and online top-up through an epay provider (ARCHITECTURE.md "Console API conventions"). */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/topup', {
    config: { auth: 'user', rateLimit: REDEEM_RATE_LIMIT },
    schema: { body: RedeemBody, response: { 200: RedeemResponse } }
  }, async (req) => ok(await redeemCode(app, req.auth!.user, req.body.key), req.t(WM.redeemed)))

  app.post('/amount', {
    config: { auth: 'user' },
    schema: { body: TopUpAmountBody, response: { 200: TopUpAmountResponse } }
  }, async (req) => ok(await quoteTopUp(app, req.auth!.user, req.body.amount)))

  // The console posts `data` as a form to `url`, the provider's payment page.
  app.post('/pay', {
    config: { auth: 'user', rateLimit: PAY_RATE_LIMIT },
    schema: { body: TopUpPayBody, response: { 200: TopUpPayResponse } }
  }, async (req) => {
    const { fields, url } = await createTopUpOrder(app, req.auth!.user, req.body)
    return { success: true, message: 'success', data: fields, url }
  })

  // Form bodies are parsed for the provider's callback only, in its own context.
  await app.register(async (notify) => {
    await notify.register(formbody)
    // Providers call back with GET (query string) or POST (form); they expect plain `success` or `fail`.
    notify.route({
      method: ['GET', 'POST'],
      url: '/epay/notify',
      config: { auth: 'public' },
      handler: async (req, reply) => {
        reply.type('text/plain; charset=utf-8')
        // Not configured, nothing can be verified: the endpoint is as absent as other providers'.
        if (!epayNotifyEnabled(await app.loadOptions())) return await reply.code(404).send('fail')
        const fromBody = req.method === 'POST' && typeof req.body === 'object' && req.body !== null && Object.keys(req.body).length > 0
        const params = notifyParams(fromBody ? req.body : req.query)
        if (params === undefined) req.log.warn({ reason: 'repeated or non-text parameters' }, 'epay notification refused')
        const handled = params !== undefined && await settleEpayNotify(app, params)
        return await reply.send(handled ? 'success' : 'fail')
      }
    })
  })
}
export default routes
