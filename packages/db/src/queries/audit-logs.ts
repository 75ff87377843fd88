import { type Kysely, type SelectQueryBuilder, sql, type Transaction } from 'kysely'
import type { AuditLog, Database, NewAuditLog } from '../schema/index.js'
import { partitionsOf } from './log-search.js'

/**
 * Makes sure the monthly audit_logs partitions exist from last month through `monthsAhead` months
 * after `now`. Returns how many partitions were created. Safe to call from many replicas at once.
 */
export async function ensureAuditLogPartitions (db: Kysely<Database>, now: Date = new Date(), monthsAhead = 2): Promise<number> {
  const { rows } = await sql<{ created: boolean }>`
    select audit_logs_ensure_partition(${now.toISOString()}::timestamptz + make_interval(months => m)) as created
    from generate_series(-1, ${monthsAhead}::int) as m
  `.execute(db)
  return rows.filter((r) => r.created).length
}

/** Appends audit entries in one statement; created_at defaults to now. */
export async function insertAuditLogs (db: Kysely<Database> | Transaction<Database>, entries: ReadonlyArray<Omit<NewAuditLog, 'created_at'> & { created_at?: number }>): Promise<void> {
  if (entries.length === 0) return
  const now = Math.floor(Date.now() / 1000)
  await db.insertInto('audit_logs').values(entries.map(({ changes, ...rest }) => ({
    created_at: now,
    ...rest,
    // pg would send a JavaScript object as text of its own making; JSON it is.
    ...(changes === undefined ? {} : { changes: typeof changes === 'string' ? changes : JSON.stringify(changes) })
  }))).execute()
}

/** Filters of the console's audit view; an absent field does not filter. */
export interface AuditLogFilter {
  /** The actor's username at the time, or their id when all digits. */
  actor?: string
  action?: string
  targetType?: string
  targetId?: string
  /** Unix seconds, inclusive. */
  start?: number
  /** Unix seconds, exclusive. */
  end?: number
}

type AuditQuery<O> = SelectQueryBuilder<Database, 'audit_logs', O>

function filtered<O> (qb: AuditQuery<O>, f: AuditLogFilter): AuditQuery<O> {
  // Plain comparisons on the partition key, so the planner prunes months.
  if (f.start !== undefined) qb = qb.where('audit_logs.created_at', '>=', f.start)
  if (f.end !== undefined) qb = qb.where('audit_logs.created_at', '<', f.end)
  if (f.actor !== undefined) {
    const actor = f.actor
    qb = /^\d{1,9}$/.test(actor)
      ? qb.where((eb) => eb.or([eb('audit_logs.actor_id', '=', Number(actor)), eb('audit_logs.actor_name', '=', actor)]))
      : qb.where('audit_logs.actor_name', '=', actor)
  }
  if (f.action !== undefined) qb = qb.where('audit_logs.action', '=', f.action)
  if (f.targetType !== undefined) qb = qb.where('audit_logs.target_type', '=', f.targetType)
  if (f.targetId !== undefined) qb = qb.where('audit_logs.target_id', '=', f.targetId)
  return qb
}

/** One page of audit entries matching `filter`, newest first (ties by id, highest first). */
export async function findAuditLogs (db: Kysely<Database>, filter: AuditLogFilter, page: { offset: number, limit: number }): Promise<AuditLog[]> {
  return await filtered(db.selectFrom('audit_logs').selectAll(), filter)
    .orderBy('audit_logs.created_at', 'desc').orderBy('audit_logs.id', 'desc')
    .offset(page.offset).limit(page.limit)
    .execute()
}

/** How many audit entries match `filter`. */
export async function countAuditLogs (db: Kysely<Database>, filter: AuditLogFilter): Promise<number> {
  const row = await filtered(db.selectFrom('audit_logs').select((eb) => eb.fn.countAll<number>().as('n')), filter).executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * Drops the audit_logs months that end at or before `before` (unix seconds) and returns how many
 * entries they held. Entries are never deleted one by one (the table refuses it): the month
 * holding `before` stays whole until it is entirely older, so an entry is kept up to a month
 * longer than asked. The default partition is left alone.
 */
export async function dropAuditLogsBefore (db: Kysely<Database>, before: number): Promise<number> {
  const parts = await partitionsOf(db, 'audit_logs')
  let total = 0
  for (const part of parts) {
    const range = part.range
    if (range === undefined || range.hi > before) continue
    const table = sql.table(part.name)
    total += await db.transaction().execute(async (trx) => {
      await sql`lock table audit_logs in access exclusive mode`.execute(trx)
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${table}`.execute(trx)
      await sql`alter table audit_logs detach partition ${table}`.execute(trx)
      await sql`drop table ${table}`.execute(trx)
      return Number(rows[0]?.n ?? 0)
    })
  }
  return total
}
