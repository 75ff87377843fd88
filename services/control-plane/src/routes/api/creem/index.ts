import type { FastifyInstance } from 'fastify'
import { handleCreemWebhook } from '../../../services/creem.js'

/**
 * Creem's webhook (`/api/creem/webhook`, new-api's path). The `creem-signature` header is an HMAC
 * of the exact bytes Creem sent, so in this context every body is kept as the raw Buffer, unparsed.
 */
export default async function creemRoutes (app: FastifyInstance): Promise<void> {
  const deps = { db: app.db, log: app.log, quota: app.quota, publishChange: app.publishChange, loadOptions: app.loadOptions }
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => { done(null, body) })
  app.post('/webhook', { config: { auth: 'public' } }, async (req, reply) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)
    const signature = req.headers['creem-signature']
    const status = await handleCreemWebhook(deps, raw, typeof signature === 'string' ? signature : undefined)
    const message = status === 404 ? 'not found' : status === 401 ? 'invalid signature' : 'unreadable event'
    return await reply.code(status).send(status === 200 ? { received: true } : { success: false, message })
  })
}
