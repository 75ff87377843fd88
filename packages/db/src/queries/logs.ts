import { type Kysely, sql, type Transaction } from 'kysely'
import type { Database, NewLog } from '../schema/index.js'

/**
 * Makes sure the monthly logs partitions exist from last month through `monthsAhead` months after
 * `now`. Returns how many partitions were created. Safe to call from many replicas at once.
 */
export async function ensureLogPartitions (db: Kysely<Database>, now: Date = new Date(), monthsAhead = 2): Promise<number> {
  const { rows } = await sql<{ created: boolean }>`
    select logs_ensure_partition(${now.toISOString()}::timestamptz + make_interval(months => m)) as created
    from generate_series(-1, ${monthsAhead}::int) as m
  `.execute(db)
  return rows.filter((r) => r.created).length
}

/** Names of the logs partitions with their bounds (unix seconds), oldest first; default last. */
export async function listLogPartitions (db: Kysely<Database>): Promise<Array<{ name: string, bound: string }>> {
  const { rows } = await sql<{ name: string, bound: string }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'logs'::regclass
    order by c.relname = 'logs_default', c.relname
  `.execute(db)
  return rows
}

/** Log types, named once in contracts (docs/domain.md). */
export { LOG_TYPE } from '@modelgate/contracts'

/** Appends one log row; created_at defaults to now. */
export async function insertLog (db: Kysely<Database> | Transaction<Database>, log: Omit<NewLog, 'created_at'> & { created_at?: number }): Promise<void> {
  await db.insertInto('logs').values({ created_at: Math.floor(Date.now() / 1000), ...log }).execute()
}
