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
import { recordAudit, recordAudits } from '../../../services/audit.js'
import { redemptionAudit } from '../../../services/audit-targets.js'
import {
  createRedemptions,
  deleteRedemption,
  getRedemption,
  listRedemptionPage,
  setRedemptionStatus,
  updateRedemption
} from '../../../services/redemptions.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

/** Redemption codes, managed by admins. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, loadOptions: app.loadOptions }
  // Every answer here can carry codes, which are bearer secrets.
  app.addHook('onSend', async (_req, reply) => {
    reply.header('cache-control', 'no-store')
  })

  app.get('/', {
    config: { auth: 'admin' },
    schema: { querystring: RedemptionListQuery, response: { 200: RedemptionPageResponse } }
  }, async (req) => ok(await listRedemptionPage(deps, req.query)))

  app.get('/search', {
    config: { auth: 'admin' },
    schema: { querystring: RedemptionSearchQuery, response: { 200: RedemptionPageResponse } }
  }, async (req) => ok(await listRedemptionPage(deps, req.query)))

  app.get('/:id', {
    config: { auth: 'admin' },
    schema: { params: IdParams, response: { 200: RedemptionResponse } }
  }, async (req) => ok(await getRedemption(deps, req.params.id)))

  app.post('/', {
    config: { auth: 'admin' },
    schema: { body: RedemptionCreateBody, response: { 200: RedemptionCreateResponse } }
  }, async (req) => {
    const created = await createRedemptions(deps, req.auth!.user, req.body)
    await recordAudits(deps, req, created.map((r) => ({ action: 'redemption.create', targetType: 'redemption', targetId: r.id, after: redemptionAudit(r) })))
    return ok(created.map((r) => r.key), req.t(WM.redemptionsCreated, { count: created.length }))
  })

  app.put('/', {
    config: { auth: 'admin' },
    schema: {
      querystring: Type.Object({ status_only: Type.Optional(Type.Boolean()) }),
      body: RedemptionUpdateBody,
      response: { 200: RedemptionResponse }
    }
  }, async (req) => {
    const before = await getRedemption(deps, req.body.id)
    const statusOnly = req.query.status_only === true
    const after = statusOnly ? await setRedemptionStatus(deps, req.body.id, req.body.status) : await updateRedemption(deps, req.body)
    await recordAudit(deps, req, { action: 'redemption.update', targetType: 'redemption', targetId: after.id, before: redemptionAudit(before), after: redemptionAudit(after) })
    return statusOnly ? ok(after) : ok(after, req.t(WM.redemptionUpdated))
  })

  // The console calls DELETE /api/redemption/{id}/; both spellings are routes so each declares its access.
  for (const url of ['/:id/', '/:id']) {
    app.delete(url, {
      config: { auth: 'admin' },
      schema: { params: IdParams, response: { 200: ApiEnvelope(Type.Null()) } }
    }, async (req) => {
      const before = await getRedemption(deps, req.params.id)
      await deleteRedemption(deps, req.params.id)
      await recordAudit(deps, req, { action: 'redemption.delete', targetType: 'redemption', targetId: req.params.id, before: redemptionAudit(before) })
      return ok(null, req.t(WM.redemptionDeleted))
    })
  }
}
export default routes
