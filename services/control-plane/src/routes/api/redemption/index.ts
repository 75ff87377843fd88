import {
  ApiEnvelope,
  RedemptionCreateBody,
  RedemptionCreateResponse,
  RedemptionListQuery,
  RedemptionPageResponse,
  RedemptionResponse,
  RedemptionSearchQuery,
  RedemptionUpdateBody
} from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { ok } from '../../../lib/errors.js'
import { WM } from '../../../lib/wallet-messages.js'
import {
  createRedemptions,
  deleteRedemption,
  getRedemption,
  listRedemptionPage,
  setRedemptionStatus,
  updateRedemption
} from '../../../services/redemptions.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

/** Redemption codes (SPEC.md section 7, "Redemption and top-up"), managed by admins. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  // Every answer here can carry codes, which are bearer secrets.
  app.addHook('onSend', async (_req, reply) => {
    reply.header('cache-control', 'no-store')
  })

  app.get('/', {
    config: { auth: 'admin' },
    schema: { querystring: RedemptionListQuery, response: { 200: RedemptionPageResponse } }
  }, async (req) => ok(await listRedemptionPage(app, req.query)))

  app.get('/search', {
    config: { auth: 'admin' },
    schema: { querystring: RedemptionSearchQuery, response: { 200: RedemptionPageResponse } }
  }, async (req) => ok(await listRedemptionPage(app, req.query)))

  app.get('/:id', {
    config: { auth: 'admin' },
    schema: { params: IdParams, response: { 200: RedemptionResponse } }
  }, async (req) => ok(await getRedemption(app, req.params.id)))

  app.post('/', {
    config: { auth: 'admin' },
    schema: { body: RedemptionCreateBody, response: { 200: RedemptionCreateResponse } }
  }, async (req) => {
    const keys = await createRedemptions(app, req.auth!.user, req.body)
    return ok(keys, req.t(WM.redemptionsCreated, { count: keys.length }))
  })

  app.put('/', {
    config: { auth: 'admin' },
    schema: {
      querystring: Type.Object({ status_only: Type.Optional(Type.Boolean()) }),
      body: RedemptionUpdateBody,
      response: { 200: RedemptionResponse }
    }
  }, async (req) => {
    if (req.query.status_only === true) return ok(await setRedemptionStatus(app, req.body.id, req.body.status))
    return ok(await updateRedemption(app, req.body), req.t(WM.redemptionUpdated))
  })

  // The console calls DELETE /api/redemption/{id}/; both spellings are routes so each declares its access.
  for (const url of ['/:id/', '/:id']) {
    app.delete(url, {
      config: { auth: 'admin' },
      schema: { params: IdParams, response: { 200: ApiEnvelope(Type.Null()) } }
    }, async (req) => {
      await deleteRedemption(app, req.params.id)
      return ok(null, req.t(WM.redemptionDeleted))
    })
  }
}
export default routes
