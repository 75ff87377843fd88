import { type Kysely, type SelectQueryBuilder, sql } from 'kysely'
import type { Database, Midjourney, Task } from '../schema/index.js'

/** Filters of the drawing (`/api/mj`) and music (`/api/task`) task lists; times in unix seconds. */
export interface TaskFilter {
  userId?: number
  channelId?: number
  /** mj_id for drawing tasks, task_id for music tasks (exact). */
  externalId?: string
  start?: number
  end?: number
}

function where<QB extends SelectQueryBuilder<Database, 'midjourneys' | 'tasks', object>> (qb: QB, f: TaskFilter, idColumn: 'mj_id' | 'task_id'): QB {
  let q = qb
  if (f.userId !== undefined) q = q.where('user_id', '=', f.userId) as QB
  if (f.channelId !== undefined) q = q.where('channel_id', '=', f.channelId) as QB
  if (f.externalId !== undefined && f.externalId !== '') q = q.where(sql<string>`${sql.ref(idColumn)}`, '=', f.externalId) as QB
  if (f.start !== undefined) q = q.where('submit_time', '>=', f.start) as QB
  if (f.end !== undefined) q = q.where('submit_time', '<=', f.end) as QB
  return q
}

/** A page of drawing tasks, newest first, with the total. */
export async function findMidjourneys (db: Kysely<Database>, f: TaskFilter, page: { offset: number, limit: number }): Promise<{ items: Midjourney[], total: number }> {
  const base = where(db.selectFrom('midjourneys'), f, 'mj_id')
  const [items, count] = await Promise.all([
    base.selectAll().orderBy('submit_time', 'desc').orderBy('id', 'desc').offset(page.offset).limit(page.limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  ])
  return { items, total: Number(count.n) }
}

/** A page of music (Suno-style) tasks, newest first, with the total. */
export async function findTasks (db: Kysely<Database>, f: TaskFilter, page: { offset: number, limit: number }): Promise<{ items: Task[], total: number }> {
  const base = where(db.selectFrom('tasks'), f, 'task_id')
  const [items, count] = await Promise.all([
    base.selectAll().orderBy('submit_time', 'desc').orderBy('id', 'desc').offset(page.offset).limit(page.limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  ])
  return { items, total: Number(count.n) }
}
