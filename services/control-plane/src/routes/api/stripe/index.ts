import type { FastifyInstance } from 'fastify'
import { handleStripeWebhook } from '../../../services/stripe.js'

/**
 * Stripe's webhook (`/api/stripe/webhook`). The signature covers the exact bytes Stripe sent, so
 * in this context every body is kept as the raw Buffer, unparsed.
 */
export default async function stripeRoutes (app: FastifyInstance): Promise<void> {
  const deps = { db: app.db, log: app.log, quota: app.quota, publishChange: app.publishChange, loadOptions: app.loadOptions, outbound: app.outbound }
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => { done(null, body) })
  app.post('/webhook', { config: { auth: 'public' } }, async (req, reply) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)
    const signature = req.headers['stripe-signature']
    const status = await handleStripeWebhook(deps, raw, typeof signature === 'string' ? signature : undefined)
    return await reply.code(status).send(status === 200 ? { received: true } : { success: false, message: status === 404 ? 'not found' : 'invalid signature' })
  })
}
