import {
  ApiEnvelope,
  TokenCreateBody,
  TokenCreateResponse,
  TokenKeyResponse,
  TokenListQuery,
  TokenPageResponse,
  TokenResponse,
  TokenSearchQuery,
  TokenUpdateBody
} from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { ok } from '../../../lib/errors.js'
import { TM } from '../../../lib/token-messages.js'
import {
  createTokens,
  deleteToken,
  getToken,
  listTokens,
  revealTokenKey,
  setTokenStatus,
  updateToken
} from '../../../services/tokens.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

/** The caller's relay tokens; nobody sees another user's tokens. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, secrets: app.secrets, quota: app.quota, publishChange: app.publishChange, loadOptions: app.loadOptions }
  app.get('/', {
    config: { auth: 'user' },
    schema: { querystring: TokenListQuery, response: { 200: TokenPageResponse } }
  }, async (req) => ok(await listTokens(deps, req.auth!.user.id, req.query)))

  app.get('/search', {
    config: { auth: 'user' },
    schema: { querystring: TokenSearchQuery, response: { 200: TokenPageResponse } }
  }, async (req) => ok(await listTokens(deps, req.auth!.user.id, req.query)))

  app.get('/:id', {
    config: { auth: 'user' },
    schema: { params: IdParams, response: { 200: TokenResponse } }
  }, async (req) => ok(await getToken(deps, req.auth!.user.id, req.params.id)))

  app.post('/:id/key', {
    config: { auth: 'user' },
    schema: { params: IdParams, response: { 200: TokenKeyResponse } }
  }, async (req, reply) => {
    const key = await revealTokenKey(deps, req.auth!.user.id, req.params.id)
    reply.header('cache-control', 'no-store')
    return ok({ key })
  })

  app.post('/', {
    config: { auth: 'user' },
    schema: { body: TokenCreateBody, response: { 200: TokenCreateResponse } }
  }, async (req, reply) => {
    const created = await createTokens(deps, req.auth!.user, req.body)
    // The answer carries the new full keys (shown once for copying): keep it out of caches.
    reply.header('cache-control', 'no-store')
    return ok(created.length === 1 ? created[0]! : created, req.t(TM.tokenCreated))
  })

  app.put('/', {
    config: { auth: 'user' },
    schema: {
      querystring: Type.Object({ status_only: Type.Optional(Type.Boolean()) }),
      body: TokenUpdateBody,
      response: { 200: TokenResponse }
    }
  }, async (req) => {
    if (req.query.status_only === true) return ok(await setTokenStatus(deps, req.auth!.user.id, req.body.id, req.body.status))
    return ok(await updateToken(deps, req.auth!.user, req.body), req.t(TM.tokenUpdated))
  })

  // The console calls DELETE /api/token/{id}/; both spellings are routes so each declares its access.
  for (const url of ['/:id/', '/:id']) {
    app.delete(url, {
      config: { auth: 'user' },
      schema: { params: IdParams, response: { 200: ApiEnvelope(Type.Null()) } }
    }, async (req) => {
      await deleteToken(deps, req.auth!.user.id, req.params.id)
      return ok(null, req.t(TM.tokenDeleted))
    })
  }
}
export default routes
