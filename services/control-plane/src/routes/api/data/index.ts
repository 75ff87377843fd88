import { findUsageBuckets } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { fail, ok } from '../../../lib/errors.js'
import { LM, usageRangeOf, UsageQuery } from '../../../services/logs.js'

type UsageQueryValues = Parameters<typeof usageRangeOf>[0]

const routes: FastifyPluginAsyncTypebox = async (app) => {
  async function buckets (q: UsageQueryValues, who: { userId?: number, username?: string }) {
    const options = await app.loadOptions()
    if (!options.bool('DataExportEnabled')) throw fail(LM.dataExportDisabled)
    const range = usageRangeOf(q, options.str('DataExportDefaultTime'), Math.floor(Date.now() / 1000))
    return ok(await findUsageBuckets(app.db, { ...range, ...who }))
  }

  app.get('/', {
    config: { auth: 'admin' },
    schema: { querystring: Type.Object({ ...UsageQuery, username: Type.Optional(Type.String({ maxLength: 200 })) }) }
  }, async (req) => await buckets(req.query, { username: req.query.username === '' ? undefined : req.query.username }))

  for (const url of ['/self', '/self/']) {
    app.get(url, {
      config: { auth: 'user' },
      schema: { querystring: Type.Object(UsageQuery) }
    }, async (req) => await buckets(req.query, { userId: req.auth!.user.id }))
  }
}
export default routes
