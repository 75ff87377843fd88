import { countLogs, deleteLogsBefore, findLogs, type LogFilter, sumLogStats } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { ok } from '../../../lib/errors.js'
import { pageOf, type PageParams, PageQuery } from '../../../lib/paging.js'
import { recordAudit } from '../../../services/audit.js'
import { AdminLogQuery, LM, logFilterOf, selfLogFilterOf, selfLogView, SelfLogQuery } from '../../../services/logs.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db }
  async function page (filter: LogFilter, q: PageParams) {
    const { page, pageSize, offset } = pageOf(q)
    const [items, total] = await Promise.all([findLogs(app.db, filter, { offset, limit: pageSize }), countLogs(app.db, filter)])
    return { items, page, page_size: pageSize, total }
  }
  const nowSeconds = () => Math.floor(Date.now() / 1000)
  const stats = async (filter: LogFilter) => ok(await sumLogStats(app.db, filter, nowSeconds()))

  app.get('/', {
    config: { auth: 'admin' },
    schema: { querystring: Type.Object({ ...PageQuery, ...AdminLogQuery }) }
  }, async (req) => ok(await page(logFilterOf(req.query), req.query)))

  app.get('/stat', {
    config: { auth: 'admin' },
    schema: { querystring: Type.Object(AdminLogQuery) }
  }, async (req) => await stats(logFilterOf(req.query)))

  // The console calls both spellings; each is its own route so that each declares its access.
  for (const url of ['/self', '/self/']) {
    app.get(url, {
      config: { auth: 'user' },
      schema: { querystring: Type.Object({ ...PageQuery, ...SelfLogQuery }) }
    }, async (req) => {
      const data = await page(selfLogFilterOf(req.query, req.auth!.user, nowSeconds()), req.query)
      return ok({ ...data, items: data.items.map(selfLogView) })
    })
  }

  app.get('/self/stat', {
    config: { auth: 'user' },
    schema: { querystring: Type.Object(SelfLogQuery) }
  }, async (req) => await stats(selfLogFilterOf(req.query, req.auth!.user, nowSeconds())))

  app.delete('/', {
    config: { auth: 'root' },
    schema: { querystring: Type.Object({ target_timestamp: Type.Integer({ minimum: 1 }) }) }
  }, async (req) => {
    const n = await deleteLogsBefore(app.db, req.query.target_timestamp)
    await recordAudit(deps, req, { action: 'log.delete', targetType: 'log', after: { target_timestamp: req.query.target_timestamp, removed: n } })
    return ok(n, req.t(LM.logsCleared, { n }))
  })
}
export default routes
