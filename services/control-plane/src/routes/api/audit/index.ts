import { AUDIT_EXPORT_MAX, AuditFilterQuery, AuditListQuery, AuditPageResponse } from '@modelgate/contracts'
import { countAuditLogs, findAuditLogs } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ok } from '../../../lib/errors.js'
import { pageOf } from '../../../lib/paging.js'
import { auditCsv, auditFilterOf, auditView } from '../../../services/audit.js'

/**
 * The audit trail (root only). Read-only: no route edits or deletes an entry, and the table
 * refuses updates and deletes; entries leave only with their month, by retention.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', {
    config: { auth: 'root' },
    schema: { querystring: AuditListQuery, response: { 200: AuditPageResponse } }
  }, async (req) => {
    const { page, pageSize, offset } = pageOf(req.query)
    const filter = auditFilterOf(req.query)
    const [items, total] = await Promise.all([findAuditLogs(app.db, filter, { offset, limit: pageSize }), countAuditLogs(app.db, filter)])
    return ok({ items: items.map(auditView), page, page_size: pageSize, total })
  })

  app.get('/export', {
    config: { auth: 'root' },
    schema: { querystring: AuditFilterQuery }
  }, async (req, reply) => {
    const rows = await findAuditLogs(app.db, auditFilterOf(req.query), { offset: 0, limit: AUDIT_EXPORT_MAX })
    const stamp = new Date().toISOString().slice(0, 10)
    return await reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="audit-${stamp}.csv"`)
      .header('cache-control', 'no-store')
      .send(auditCsv(rows.map(auditView)))
  })
}
export default routes
