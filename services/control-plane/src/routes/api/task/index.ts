import { findMidjourneys, findTasks, type TaskFilter } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { ok } from '../../../lib/errors.js'
import { pageOf, PageQuery } from '../../../lib/paging.js'

const TimeQuery = {
  start_timestamp: Type.Optional(Type.Integer({ minimum: 0 })),
  end_timestamp: Type.Optional(Type.Integer({ minimum: 0 }))
}
const ChannelQuery = { channel_id: Type.Optional(Type.Integer({ minimum: 0 })) }

/** Admin-only columns (docs/domain.md): the channel and the submit result. */
function selfView<T extends { channel_id: number }> (row: T): Omit<T, 'channel_id' | 'code'> {
  const { channel_id: _channel, code: _code, ...rest } = row as T & { code?: number }
  return rest
}

function filterOf (q: { start_timestamp?: number, end_timestamp?: number, channel_id?: number }, externalId: string | undefined, userId?: number): TaskFilter {
  return {
    userId,
    channelId: q.channel_id === 0 ? undefined : q.channel_id,
    externalId,
    start: q.start_timestamp,
    end: q.end_timestamp
  }
}

/**
 * Drawing tasks (`/api/mj`) and music tasks (`/api/task`): admins see everyone's with the
 * channel filter and columns, users their own (`/self`).
 */
export const midjourneyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const Query = { ...PageQuery, ...TimeQuery, mj_id: Type.Optional(Type.String({ maxLength: 100 })) }
  app.get('/', { config: { auth: 'admin' }, schema: { querystring: Type.Object({ ...Query, ...ChannelQuery }) } }, async (req) => {
    const { page, pageSize, offset } = pageOf(req.query)
    const { items, total } = await findMidjourneys(app.db, filterOf(req.query, req.query.mj_id), { offset, limit: pageSize })
    return ok({ items, page, page_size: pageSize, total })
  })
  for (const url of ['/self', '/self/']) {
    app.get(url, { config: { auth: 'user' }, schema: { querystring: Type.Object(Query) } }, async (req) => {
      const { page, pageSize, offset } = pageOf(req.query)
      const { items, total } = await findMidjourneys(app.db, filterOf(req.query, req.query.mj_id, req.auth!.user.id), { offset, limit: pageSize })
      return ok({ items: items.map(selfView), page, page_size: pageSize, total })
    })
  }
}

export const taskRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const Query = { ...PageQuery, ...TimeQuery, task_id: Type.Optional(Type.String({ maxLength: 100 })) }
  app.get('/', { config: { auth: 'admin' }, schema: { querystring: Type.Object({ ...Query, ...ChannelQuery }) } }, async (req) => {
    const { page, pageSize, offset } = pageOf(req.query)
    const { items, total } = await findTasks(app.db, filterOf(req.query, req.query.task_id), { offset, limit: pageSize })
    return ok({ items, page, page_size: pageSize, total })
  })
  for (const url of ['/self', '/self/']) {
    app.get(url, { config: { auth: 'user' }, schema: { querystring: Type.Object(Query) } }, async (req) => {
      const { page, pageSize, offset } = pageOf(req.query)
      const { items, total } = await findTasks(app.db, filterOf(req.query, req.query.task_id, req.auth!.user.id), { offset, limit: pageSize })
      return ok({ items: items.map(selfView), page, page_size: pageSize, total })
    })
  }
}
