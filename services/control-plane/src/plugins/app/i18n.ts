import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { type Msg, t } from '../../lib/i18n.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** A message in this request's language. */
    t: (msg: Msg, vars?: Record<string, string | number>) => string
  }
}

export default fp(async (app: FastifyInstance) => {
  app.decorateRequest('t', function (this: FastifyRequest, msg: Msg, vars?: Record<string, string | number>) {
    return t(this, msg, vars)
  })
}, { name: 'i18n' })
