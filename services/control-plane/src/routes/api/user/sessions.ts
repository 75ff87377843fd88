import { SessionListResponse, SessionParams, SessionRevokeResponse } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { fail, ok } from '../../../lib/errors.js'
import { SM } from '../../../lib/session-messages.js'
import { listSessions, revokeOtherSessions, revokeSession } from '../../../services/sessions.js'

/** The caller's signed-in console sessions (registered under /user): list, end one, end the others. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, renewSession: app.renewSession }
  app.get('/sessions', {
    config: { auth: 'user' },
    schema: { response: { 200: SessionListResponse } }
  }, async (req, reply) => {
    reply.header('cache-control', 'no-store')
    return ok(await listSessions(deps, req))
  })

  app.delete('/sessions/:id', {
    config: { auth: 'user' },
    schema: { params: SessionParams, response: { 200: SessionRevokeResponse } }
  }, async (req, reply) => {
    // Ending this very session is signing out here.
    if (req.params.id === req.auth!.session?.jti) {
      await app.endSession(req, reply)
      return ok(1, req.t(SM.sessionRevoked))
    }
    if (!await revokeSession(deps, req.auth!.user.id, req.params.id)) throw fail(SM.sessionNotFound)
    return ok(1, req.t(SM.sessionRevoked))
  })

  app.delete('/sessions', {
    config: { auth: 'user' },
    schema: { response: { 200: SessionRevokeResponse } }
  }, async (req, reply) => {
    const n = await revokeOtherSessions(deps, req, reply)
    return ok(n, req.t(SM.othersRevoked, { n }))
  })
}
export default routes
