import { ApiEnvelope, SetupBody, SetupStatusResponse } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { ok } from '../../../lib/errors.js'
import { SM } from '../../../lib/setup-messages.js'
import { completeSetup, setupStatus } from '../../../services/setup.js'

/**
 * First-run setup (new-api's `/api/setup`): with no account and no INITIAL_ROOT_PASSWORD, the
 * console asks the first visitor for the super admin's name and password.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db }
  app.addHook('onSend', async (_req, reply) => {
    reply.header('cache-control', 'no-store')
  })

  app.get('/', {
    config: { auth: 'public' },
    schema: { response: { 200: SetupStatusResponse } }
  }, async () => ok(await setupStatus(deps)))

  app.post('/', {
    config: { auth: 'public', rateLimit: { max: 20, timeWindow: '20 minutes' } },
    schema: { body: SetupBody, response: { 200: ApiEnvelope(Type.Null()) } }
  }, async (req) => {
    const root = await completeSetup(deps, req.body)
    req.log.info({ username: root.username }, 'created the root account through first-run setup')
    return ok(null, req.t(SM.setUp, { username: root.username }))
  })
}
export default routes
