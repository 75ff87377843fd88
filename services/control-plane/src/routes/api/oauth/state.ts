import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { ok } from '../../../lib/errors.js'
import { issueState } from '../../../services/oauth.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { redis: app.redis }
  app.get('/state', {
    config: { auth: 'public', rateLimit: { max: 60, timeWindow: '1 minute' } },
    schema: { querystring: Type.Object({ aff: Type.Optional(Type.String({ maxLength: 64 })) }) }
  }, async (req, reply) => ok(await issueState(deps, reply, req, req.query.aff ?? '')))
}
export default routes
