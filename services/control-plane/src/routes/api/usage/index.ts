import { USAGE_QUEUE } from '@modelgate/contracts'
import { bullConnection, keyUsage } from '@modelgate/service'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Queue } from 'bullmq'
import Type from 'typebox'
import { ok, unauthorized } from '../../../lib/errors.js'
import { TM } from '../../../lib/token-messages.js'
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

  // A relay key's own figures (new-api's shape, `code: true`), for scripts and chat clients that
  // hold only the key: what it was granted, has used and has left, in quota units.
  app.get('/token', { config: { auth: 'public' } }, async (req, reply) => {
    const header = req.headers.authorization ?? ''
    const key = /^Bearer\s+(\S+)$/i.exec(header)?.[1]
    if (key === undefined) throw unauthorized(TM.keyMissing)
    const usage = await keyUsage(app.db, { key })
    if (usage === undefined) throw unauthorized(TM.keyInvalid)
    void reply.header('cache-control', 'no-store')
    return {
      code: true,
      message: 'ok',
      data: {
        object: 'token_usage',
        name: usage.name,
        total_granted: usage.remain + usage.used,
        total_used: usage.used,
        total_available: usage.remain,
        unlimited_quota: usage.unlimited,
        model_limits: Object.fromEntries(usage.modelLimitsEnabled ? usage.modelLimits.split(',').map((m) => m.trim()).filter((m) => m !== '').map((m) => [m, true]) : []),
        model_limits_enabled: usage.modelLimitsEnabled,
        expires_at: usage.expiredTime === -1 ? 0 : usage.expiredTime
      }
    }
  })

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
