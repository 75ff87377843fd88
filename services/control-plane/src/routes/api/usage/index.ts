import { USAGE_QUEUE } from '@modelgate/contracts'
import { bullConnection } from '@modelgate/service'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Queue } from 'bullmq'
import Type from 'typebox'
import { ok } from '../../../lib/errors.js'
import { pageOf, PageQuery } from '../../../lib/paging.js'

/** The events of a usage job: a gateway's batch (`{events}`) or one bare event. */
function eventsOf (data: unknown): unknown[] {
  const events = typeof data === 'object' && data !== null ? (data as { events?: unknown }).events : undefined
  return Array.isArray(events) ? events : [data]
}

/**
 * Usage events the billing worker gave up on (malformed events), with their reason, so an admin
 * can see what was not billed. Transient failures never land here: they retry until they settle.
 */
const routes: FastifyPluginAsyncTypebox<{ redisUrl: string, keyPrefix: string }> = async (app, opts) => {
  const queue = new Queue(USAGE_QUEUE, { connection: bullConnection(opts.redisUrl), prefix: `${opts.keyPrefix}bull` })
  app.addHook('onClose', async () => { await queue.close() })

  app.get('/failed', { config: { auth: 'admin' }, schema: { querystring: Type.Object(PageQuery) } }, async (req) => {
    const { page, pageSize, offset } = pageOf(req.query)
    const [jobs, total] = await Promise.all([queue.getFailed(offset, offset + pageSize - 1), queue.getFailedCount()])
    return ok({
      items: jobs.map((j) => ({ id: j.id, reason: j.failedReason, attempts: j.attemptsMade, failed_at: Math.floor((j.finishedOn ?? 0) / 1000), events: eventsOf(j.data) })),
      page,
      page_size: pageSize,
      total
    })
  })
}
export default routes
