import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { Database } from './schema/index.js'

const INT8_OID = 20

function parseInt8 (text: string): number {
  const n = Number(text)
  // Quota is counted in integer units; a value past 2^53 would silently lose precision.
  if (!Number.isSafeInteger(n)) throw new RangeError(`bigint ${text} exceeds the safe integer range`)
  return n
}

const types = {
  getTypeParser (oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return parseInt8
    return pg.types.getTypeParser(oid, format)
  }
} as pg.CustomTypesConfig

/** Options for {@link createDb}. */
export interface DbOptions {
  /** Pool size; default 10. */
  max?: number
  /** Name reported in pg_stat_activity. */
  applicationName?: string
}

/** Creates the Kysely instance for `url`. int8 columns come back as numbers (checked safe). */
export function createDb (url: string, opts: DbOptions = {}): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'modelgate',
    connectionTimeoutMillis: 5_000,
    types
  })
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {})
  // Nor may one in use between two statements (a transaction awaiting its next query when the
  // connection drops): pg emits that on the client, where nobody listens. The statement that
  // follows fails with the error instead, and the pool discards the client.
  pool.on('connect', (client) => { client.on('error', () => {}) })
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  pools.set(db, pool)
  return db
}

/** The pool figures of a database made by {@link createDb}, for metrics. */
export interface PoolFigures {
  /** Connections open (idle or in use). */
  total: number
  idle: number
  /** Queries waiting for a connection. */
  waiting: number
  max: number
}

const pools = new WeakMap<object, pg.Pool>()

/** The pool figures of `db` (made by {@link createDb}); undefined for any other instance. */
export function poolFigures (db: object): PoolFigures | undefined {
  const pool = pools.get(db)
  if (pool === undefined) return undefined
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max }
}
