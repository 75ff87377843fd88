import { type Kysely, sql } from 'kysely'
import type { Database, Midjourney, Task, TaskUpdate } from '../schema/index.js'
import { LOG_TYPE } from '@modelgate/contracts'
import { insertLog } from './logs.js'

/** The two task tables: drawing tasks (Midjourney) and the others (Suno, video). */
export type TaskTable = 'midjourneys' | 'tasks'
export type TaskRow<T extends TaskTable> = T extends 'midjourneys' ? Midjourney : Task

/** Statuses after which a task never changes again. */
export const FINISHED_TASK_STATUSES = ['SUCCESS', 'FAILURE'] as const

/**
 * Claims up to `limit` unfinished tasks of `table` that no other poller holds, holding them until
 * `now + leaseMs` (unix ms): one statement with `for update skip locked`, so two pollers on any
 * replicas never claim the same task; a poller that dies lets its claim run out. Oldest claim
 * first, so every task gets its turn.
 */
export async function claimUnfinishedTasks<T extends TaskTable> (db: Kysely<Database>, table: T, opts: { now: number, leaseMs: number, limit: number }): Promise<Array<TaskRow<T>>> {
  const { rows } = await sql<TaskRow<T>>`
    update ${sql.table(table)} set lease_until = ${opts.now + opts.leaseMs}
    where id in (
      select id from ${sql.table(table)}
      where status not in ('SUCCESS', 'FAILURE') and lease_until < ${opts.now}
      order by lease_until, id
      limit ${opts.limit}
      for update skip locked
    )
    returning *
  `.execute(db)
  return rows
}

/** Lets other pollers take `ids` at once (a notification asked for a fresh look). */
export async function releaseTaskClaims (db: Kysely<Database>, table: TaskTable, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return
  await sql`update ${sql.table(table)} set lease_until = 0 where id = any(${[...ids]}::bigint[]) and status not in ('SUCCESS', 'FAILURE')`.execute(db)
}

/**
 * Writes what the upstream reports of an unfinished task (progress, images, status, success).
 * A finished task is never changed again, so a late or replayed report cannot reopen it; a
 * failure goes through {@link failAndRefundTask} instead. Returns whether the row changed.
 */
export async function updateUnfinishedTask<T extends TaskTable> (db: Kysely<Database>, table: T, id: number, fields: Record<string, unknown>): Promise<boolean> {
  const set = { ...fields, updated_at: Math.floor(Date.now() / 1000) }
  // The two tables share these columns; Kysely types one of them.
  const res = await db.updateTable(table as 'tasks').set(set as TaskUpdate)
    .where('id', '=', id).where('status', 'not in', FINISHED_TASK_STATUSES).executeTakeFirst()
  return Number(res.numUpdatedRows) > 0
}

/** A refund made: who got how much back. */
export interface TaskRefund {
  id: number
  user_id: number
  token_id: number
  unlimited_token: boolean
  quota: number
  /** The entitlement item given back `itemAmount` (in its unit) instead of the wallet `quota`. */
  itemId?: number
  itemAmount?: number
}

/**
 * Marks a task failed and gives its charge back, exactly once, in one transaction: the row's
 * `refunded_at` goes from 0 to now under its row lock (a second poller, a replayed failure or a
 * retry after a crash finds it set and changes nothing), with a settlement record
 * `refund:<table>:<id>`, the user's, token's and channel's counters and a log entry. A task that
 * succeeded is never refunded. `fields` are the upstream's last report (fail reason, progress).
 * Returns the refund, or undefined when there was nothing (more) to refund.
 */
export async function failAndRefundTask (db: Kysely<Database>, table: TaskTable, id: number, reason: string, fields: Record<string, unknown> = {}): Promise<TaskRefund | undefined> {
  const now = Math.floor(Date.now() / 1000)
  return await db.transaction().execute(async (trx) => {
    const row = await trx.updateTable(table as 'tasks')
      .set({ ...fields, status: 'FAILURE', fail_reason: reason.slice(0, 1000), finish_time: now, refunded_at: now, updated_at: now } as TaskUpdate)
      .where('id', '=', id).where('refunded_at', '=', 0).where('status', '<>', 'SUCCESS')
      .returningAll().executeTakeFirst() as Task | Midjourney | undefined
    if (row === undefined) return undefined
    const q = row.quota
    if (q <= 0) return { id, user_id: row.user_id, token_id: row.token_id, unlimited_token: row.unlimited_token, quota: 0 }
    const key = `refund:${table}:${id}`
    const fresh = await trx.insertInto('settlements').values({ request_id: key, user_id: row.user_id, quota: -q })
      .onConflict((oc) => oc.column('request_id').doNothing()).returning('request_id').executeTakeFirst()
    if (fresh === undefined) return undefined
    // Back to what paid: the subscription's item (its quota, or the one request), else the wallet.
    const item = row.subscription_item_id === null
      ? undefined
      : await trx.selectFrom('user_subscription_items').select(['id', 'quota_type']).where('id', '=', row.subscription_item_id).executeTakeFirst()
    const itemAmount = item === undefined ? 0 : item.quota_type === 1 ? 1 : q
    if (item !== undefined) {
      await trx.updateTable('user_subscription_items').set((eb) => ({ amount_used: sql<number>`greatest(0, ${eb.ref('amount_used')} - ${itemAmount})` }))
        .where('id', '=', item.id).execute()
    }
    const user = await trx.updateTable('users')
      .set((eb) => ({ quota: item === undefined ? eb('quota', '+', q) : eb.ref('quota'), used_quota: eb('used_quota', '-', q) }))
      .where('id', '=', row.user_id).returning('username').executeTakeFirst()
    if (row.token_id > 0) {
      await trx.updateTable('tokens')
        .set((eb) => ({ remain_quota: row.unlimited_token ? eb.ref('remain_quota') : eb('remain_quota', '+', q), used_quota: eb('used_quota', '-', q) }))
        .where('id', '=', row.token_id).execute()
    }
    if (row.channel_id > 0) {
      await trx.updateTable('channels').set((eb) => ({ used_quota: eb('used_quota', '-', q) })).where('id', '=', row.channel_id).execute()
    }
    const taskId = 'mj_id' in row ? row.mj_id : row.task_id
    await insertLog(trx, {
      type: LOG_TYPE.system,
      user_id: row.user_id,
      username: user?.username ?? row.username,
      token_id: row.token_id,
      token_name: row.token_name,
      model_name: row.model_name,
      channel_id: row.channel_id,
      group: row.group,
      quota: q,
      request_id: key,
      content: `task ${taskId} failed (${reason.slice(0, 200)}): refunded ${q}${item === undefined ? '' : ' to the subscription'}`,
      ...(item === undefined ? {} : { other: { billing_source: 'subscription', subscription_item_id: item.id } })
    })
    return { id, user_id: row.user_id, token_id: row.token_id, unlimited_token: row.unlimited_token, quota: q, ...(item === undefined ? {} : { itemId: item.id, itemAmount }) }
  })
}

/**
 * The tasks of `userId` among `ids` (upstream ids: mj_id or task_id), as a client fetching its own
 * tasks sees them; another user's task is simply absent (answers like a missing one), and so is
 * a task whose output its owner deleted.
 */
export async function findOwnTasks<T extends TaskTable> (db: Kysely<Database>, table: T, userId: number, ids: readonly string[], platform?: string): Promise<Array<TaskRow<T>>> {
  if (ids.length === 0) return []
  const idColumn = table === 'midjourneys' ? 'mj_id' : 'task_id'
  const { rows } = await sql<TaskRow<T>>`
    select * from ${sql.table(table)}
    where user_id = ${userId} and ${sql.ref(idColumn)} = any(${[...ids]}::text[])
    ${platform === undefined ? sql`` : sql`and platform = ${platform}`}
    ${table === 'tasks' ? sql`and deleted_at = 0` : sql``}
    order by id
  `.execute(db)
  return rows
}

/** One page of an owner's tasks of a platform, newest first unless `order` is asc. */
export interface OwnTaskPage {
  rows: Task[]
  /** Whether more rows follow the page. */
  hasMore: boolean
}

/**
 * A page of `userId`'s undeleted `platform` tasks in submit order (`desc`: newest first), after
 * the task whose upstream id is `after` (a cursor of the caller's own; another's or an unknown
 * id starts from the beginning, as a missing cursor does).
 */
export async function listOwnTasks (db: Kysely<Database>, userId: number, platform: string, opts: { limit: number, order: 'asc' | 'desc', after?: string }): Promise<OwnTaskPage> {
  const desc = opts.order === 'desc'
  const cursor = opts.after === undefined
    ? undefined
    : await db.selectFrom('tasks').select('id').where('user_id', '=', userId).where('platform', '=', platform).where('task_id', '=', opts.after).executeTakeFirst()
  const rows = await db.selectFrom('tasks').selectAll()
    .where('user_id', '=', userId).where('platform', '=', platform).where('deleted_at', '=', 0)
    .$if(cursor !== undefined, (q) => q.where('id', desc ? '<' : '>', cursor!.id))
    .orderBy('id', desc ? 'desc' : 'asc')
    .limit(opts.limit + 1)
    .execute()
  return { rows: rows.slice(0, opts.limit), hasMore: rows.length > opts.limit }
}

/** Marks a finished task deleted by its owner; false when it was not theirs, unfinished or already deleted. */
export async function markOwnTaskDeleted (db: Kysely<Database>, userId: number, id: number, now: number): Promise<boolean> {
  const r = await db.updateTable('tasks').set({ deleted_at: now })
    .where('id', '=', id).where('user_id', '=', userId).where('deleted_at', '=', 0)
    .where('status', 'in', [...FINISHED_TASK_STATUSES])
    .executeTakeFirst()
  return r.numUpdatedRows > 0n
}
