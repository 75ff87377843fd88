import { type Kysely, type SelectQueryBuilder, sql } from 'kysely'
import type { Database, Log } from '../schema/index.js'
import { LOG_TYPE, type LogType } from '@modelgate/contracts'

/** Filters of the console's log views; an absent field does not filter. */
export interface LogFilter {
  /** Only this user's rows. */
  userId?: number
  /** Only rows of the users with this username (deleted accounts included). */
  username?: string
  type?: LogType
  tokenName?: string
  modelName?: string
  channelId?: number
  /** Unix seconds, inclusive. */
  start?: number
  /** Unix seconds, exclusive. */
  end?: number
}

type LogQuery<O> = SelectQueryBuilder<Database, 'logs', O>

function filtered<O> (db: Kysely<Database>, qb: LogQuery<O>, f: LogFilter): LogQuery<O> {
  // created_at bounds are plain comparisons on the partition key so the planner prunes months.
  if (f.start !== undefined) qb = qb.where('logs.created_at', '>=', f.start)
  if (f.end !== undefined) qb = qb.where('logs.created_at', '<', f.end)
  if (f.userId !== undefined) qb = qb.where('logs.user_id', '=', f.userId)
  if (f.username !== undefined) {
    qb = qb.where('logs.user_id', 'in', db.selectFrom('users').select('users.id').where('users.username', '=', f.username))
  }
  if (f.type !== undefined) qb = qb.where('logs.type', '=', f.type)
  if (f.tokenName !== undefined) qb = qb.where('logs.token_name', '=', f.tokenName)
  if (f.modelName !== undefined) qb = qb.where('logs.model_name', '=', f.modelName)
  if (f.channelId !== undefined) qb = qb.where('logs.channel_id', '=', f.channelId)
  return qb
}

/** One page of logs matching `filter`, newest first (ties on `created_at` by `id`, highest first). */
export async function findLogs (db: Kysely<Database>, filter: LogFilter, page: { offset: number, limit: number }): Promise<Log[]> {
  // The page's keys first, then its rows. The keys come from an index-only scan of the
  // (X, created_at, id) index of the filter, read backwards; asked for whole rows at once, the
  // planner prefers the (created_at, id) index with a heap filter whenever the filter looks
  // common (a heavy user), and then reads past every newer row of everyone else. Skipping to a
  // deep page also stays in the index.
  const keys = filtered(db, db.selectFrom('logs').select(['logs.id', 'logs.created_at']), filter)
    .orderBy('logs.created_at', 'desc').orderBy('logs.id', 'desc')
    .offset(page.offset).limit(page.limit)
  let qb = db.selectFrom(keys.as('page'))
    .innerJoin('logs', (j) => j.onRef('logs.id', '=', 'page.id').onRef('logs.created_at', '=', 'page.created_at'))
    .selectAll('logs')
  // The range again, so that the join prunes months when planned rather than when run.
  if (filter.start !== undefined) qb = qb.where('logs.created_at', '>=', filter.start)
  if (filter.end !== undefined) qb = qb.where('logs.created_at', '<', filter.end)
  return await qb.orderBy('page.created_at', 'desc').orderBy('page.id', 'desc').execute()
}

/** How many logs match `filter`. */
export async function countLogs (db: Kysely<Database>, filter: LogFilter): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    // Serial on purpose: every console page counts, many users at once. The planner goes parallel
    // from a few hundred thousand rows, and two extra processes per page view were slower, not
    // faster, on the bench's 2-core host (235 000 rows: 37 ms parallel, 21 ms serial).
    await sql`set local max_parallel_workers_per_gather = 0`.execute(trx)
    const row = await filtered(trx, trx.selectFrom('logs').select((eb) => eb.fn.countAll<number>().as('n')), filter).executeTakeFirstOrThrow()
    return Number(row.n)
  })
}

/** Totals of the consume rows matching `filter`. */
export interface LogStats {
  /** Sum of quota. */
  quota: number
  /** Consume rows in the minute before `now`. */
  rpm: number
  /** Prompt plus completion tokens of those rows. */
  tpm: number
}

/** Sums the consume rows matching `filter`; rpm and tpm count the 60 seconds before `now` (unix seconds). */
export async function sumLogStats (db: Kysely<Database>, filter: LogFilter, now: number): Promise<LogStats> {
  const since = now - 60
  const row = await filtered(db, db.selectFrom('logs').select([
    sql<number>`coalesce(sum(logs.quota), 0)::bigint`.as('quota'),
    sql<number>`count(*) filter (where logs.created_at >= ${since})`.as('rpm'),
    sql<number>`coalesce(sum(logs.prompt_tokens + logs.completion_tokens) filter (where logs.created_at >= ${since}), 0)::bigint`.as('tpm')
  ]).where('logs.type', '=', LOG_TYPE.consume), filter).executeTakeFirstOrThrow()
  return { quota: Number(row.quota), rpm: Number(row.rpm), tpm: Number(row.tpm) }
}

const DELETE_BATCH = 10_000

/** `FOR VALUES FROM ('lo') TO ('hi')` as numbers; undefined for the default partition. */
function rangeOf (bound: string): { lo: number, hi: number } | undefined {
  const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(bound)
  if (m === null) return undefined
  return { lo: Number(m[1]), hi: Number(m[2]) }
}

/** The partitions of a range-partitioned table, by name, each with its range (undefined: the default partition). */
export async function partitionsOf (db: Kysely<Database>, parent: 'logs' | 'audit_logs'): Promise<Array<{ name: string, range: { lo: number, hi: number } | undefined }>> {
  const { rows } = await sql<{ name: string, bound: string }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${parent}::regclass
    order by c.relname
  `.execute(db)
  return rows.map((r) => ({ name: r.name, range: rangeOf(r.bound) }))
}

/**
 * Deletes every log created before `before` (unix seconds) and returns how many. Months entirely
 * before it are counted and truncated; the month holding it and the default partition are
 * deleted from in batches of 10 000 rows, so no statement holds many row locks for long.
 */
export async function deleteLogsBefore (db: Kysely<Database>, before: number): Promise<number> {
  const parts = await partitionsOf(db, 'logs')
  let total = 0
  for (const part of parts) {
    const range = part.range
    if (range !== undefined && range.lo >= before) continue
    const table = sql.table(part.name)
    if (range !== undefined && range.hi <= before) {
      total += await db.transaction().execute(async (trx) => {
        // Blocks writes (a late settlement) but not readers between the count and the truncate.
        await sql`lock table ${table} in share row exclusive mode`.execute(trx)
        const { rows } = await sql<{ n: number }>`select count(*) as n from ${table}`.execute(trx)
        await sql`truncate table ${table}`.execute(trx)
        return Number(rows[0]?.n ?? 0)
      })
      continue
    }
    for (;;) {
      const res = await sql`
        delete from ${table} where ctid in (
          select ctid from ${table} where created_at < ${before} limit ${DELETE_BATCH}
        )
      `.execute(db)
      const n = Number(res.numAffectedRows ?? 0)
      total += n
      if (n < DELETE_BATCH) break
    }
  }
  return total
}

/** Dashboard bucket sizes; hours are stored, days and weeks (from Monday, UTC) are summed. */
export type UsageGranularity = 'hour' | 'day' | 'week'

/** One bucket of the dashboard: a model's usage in one hour, day or week. */
export interface UsageBucket {
  /** First second of the bucket (unix seconds, UTC). */
  created_at: number
  model_name: string
  count: number
  quota: number
  token_used: number
}

/**
 * Usage per bucket and model from quota_data between `start` (inclusive) and `end` (exclusive),
 * oldest first; all users unless `userId` or `username` (deleted accounts included) is given.
 */
export async function findUsageBuckets (db: Kysely<Database>, q: {
  start: number
  end: number
  granularity: UsageGranularity
  userId?: number
  username?: string
}): Promise<UsageBucket[]> {
  const bucket = q.granularity === 'hour'
    ? sql<number>`quota_data.created_at`
    : sql<number>`extract(epoch from date_trunc(${q.granularity}, to_timestamp(quota_data.created_at) at time zone 'UTC'))::bigint`
  let qb = db.selectFrom('quota_data')
    .select([
      bucket.as('created_at'),
      'quota_data.model_name',
      sql<number>`sum(quota_data.count)::bigint`.as('count'),
      sql<number>`sum(quota_data.quota)::bigint`.as('quota'),
      sql<number>`sum(quota_data.token_used)::bigint`.as('token_used')
    ])
    .where('quota_data.created_at', '>=', q.start)
    .where('quota_data.created_at', '<', q.end)
  if (q.userId !== undefined) qb = qb.where('quota_data.user_id', '=', q.userId)
  if (q.username !== undefined) {
    qb = qb.where('quota_data.user_id', 'in', db.selectFrom('users').select('users.id').where('users.username', '=', q.username))
  }
  const rows = await qb.groupBy([sql.raw('1'), 'quota_data.model_name']).orderBy(sql.raw('1')).orderBy('quota_data.model_name').execute()
  return rows.map((r) => ({ created_at: Number(r.created_at), model_name: r.model_name, count: Number(r.count), quota: Number(r.quota), token_used: Number(r.token_used) }))
}
