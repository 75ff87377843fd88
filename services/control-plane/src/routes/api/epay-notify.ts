import formbody from '@fastify/formbody'
import type { FastifyInstance } from 'fastify'
import { epayNotifyEnabled, type EpayParams, notifyParams } from '../../services/epay.js'

/**
 * Registers an epay notification endpoint at `url` in a context of its own (form bodies are parsed
 * there only). Providers call back with GET (query string) or POST (form) and expect plain
 * `success` or `fail`. While epay is not configured nothing can be verified: the endpoint answers
 * as missing (404). `settle` is true when the notification is genuine and its order paid; a
 * notification whose parameters repeat or are not text is refused and logged as `refused`.
 */
export async function registerEpayNotify (app: FastifyInstance, url: string, settle: (params: EpayParams) => Promise<boolean>, refused: string): Promise<void> {
  await app.register(async (notify) => {
    await notify.register(formbody)
    notify.route({
      method: ['GET', 'POST'],
      url,
      config: { auth: 'public' },
      handler: async (req, reply) => {
        reply.type('text/plain; charset=utf-8')
        if (!epayNotifyEnabled(await app.loadOptions())) return await reply.code(404).send('fail')
        const fromBody = req.method === 'POST' && typeof req.body === 'object' && req.body !== null && Object.keys(req.body).length > 0
        const params = notifyParams(fromBody ? req.body : req.query)
        if (params === undefined) req.log.warn({ reason: 'repeated or non-text parameters' }, refused)
        const handled = params !== undefined && await settle(params)
        return await reply.send(handled ? 'success' : 'fail')
      }
    })
  })
}
