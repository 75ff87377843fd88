import { createDb, type Database, ensureAuditLogPartitions, ensureLogPartitions, type Kysely, migrateToLatest, pendingMigrations, pingDb } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Redis } from 'ioredis'
import { trackPool, trackRedis } from './metrics.js'
import { checkRedisDurability, REDIS_CLUSTER_REFUSED, redisOptions, type RedisTarget } from './redis.js'

declare module 'fastify' {
  interface FastifyInstance {
    db: Kysely<Database>
    redis: Redis
  }
}

/** Options of {@link dbPlugin}. */
export interface DbPluginOptions {
  url: string
  applicationName: string
  /** Pool size; default 10. */
  max?: number
  /** Apply pending migrations (and create upcoming logs partitions) before the service starts. */
  migrate: boolean
}

/** Decorates `app.db` (Kysely over a pg pool); migrates first when asked; closes the pool on close. */
export const dbPlugin = fp(async (app: FastifyInstance, opts: DbPluginOptions) => {
  const db = createDb(opts.url, { max: opts.max, applicationName: opts.applicationName })
  const untrack = trackPool(db)
  app.addHook('onClose', async () => { untrack(); await db.destroy() })
  if (opts.migrate) {
    const { applied, newer } = await migrateToLatest(db)
    if (applied.length > 0) app.log.info({ applied }, 'database migrations applied')
    if (newer.length > 0) app.log.warn({ newer }, 'the database was migrated by a newer release (a rollback?): running on its schema')
    await ensureLogPartitions(db)
    await ensureAuditLogPartitions(db)
  }
  app.decorate('db', db)
}, { name: 'db', fastify: '5.x' })

/** Options of {@link redisPlugin}. */
export interface RedisPluginOptions {
  url: string
  /** Prefix of every key this service writes (isolates tests and co-hosted deployments). */
  keyPrefix: string
  /**
   * Sends the commands issued in the same event-loop tick as one write: worth it where many are
   * issued together (the worker settling a batch); a pipeline of one costs more than a command.
   */
  autoPipelining?: boolean
}

/** Longest wait for a Redis answer: a Redis that hangs (no reset, no answer) fails requests within it. */
export const REDIS_COMMAND_TIMEOUT_MS = 2_000

/**
 * Decorates `app.redis`. Commands fail at once instead of queueing while Redis is down, and after
 * {@link REDIS_COMMAND_TIMEOUT_MS} when it does not answer (REL-36: the relay answers 503 within
 * about two seconds, never hangs).
 */
export const redisPlugin = fp(async (app: FastifyInstance, opts: RedisPluginOptions) => {
  const redis = new Redis({
    ...redisOptions(opts.url),
    keyPrefix: opts.keyPrefix,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    lazyConnect: true,
    enableAutoPipelining: opts.autoPipelining === true
  })
  redis.on('error', (err: Error) => app.log.warn({ err }, 'redis connection error'))
  // Commands wait for the first connection (the service starts while Redis comes up); once it
  // has been up, a command issued while it is away fails at once instead of waiting in the
  // offline queue for the next reconnection attempt (seconds): the relay answers 503 at once.
  redis.once('ready', () => {
    redis.options.enableOfflineQueue = false
    void reportRedisDurability(app, redis)
  })
  // Not awaited: a service starts (and reports not ready) while Redis is down, then recovers.
  redis.connect().catch(() => {})
  const untrack = trackRedis(redis)
  app.addHook('onClose', async () => {
    untrack()
    await redis.quit().catch(() => redis.disconnect())
  })
  app.decorate('redis', redis)
}, { name: 'redis', fastify: '5.x' })

/** Redis connections found to be Redis Cluster nodes: their readiness check fails. */
const refusedRedis = new WeakSet<Redis>()

/**
 * Once per connection, at start: warns when Redis may lose the usage queue (eviction policy,
 * persistence off), says what to check by hand when CONFIG is disabled (managed Redis), and
 * refuses a Redis Cluster node (logged, and /readyz fails).
 */
async function reportRedisDurability (app: FastifyInstance, redis: Redis): Promise<void> {
  try {
    const found = await checkRedisDurability(redis)
    if (found.cluster) {
      refusedRedis.add(redis)
      app.log.error(REDIS_CLUSTER_REFUSED)
    }
    if (found.unreadable !== undefined) {
      app.log.info({ reason: found.unreadable }, 'cannot read the Redis configuration (CONFIG disabled?): make sure maxmemory-policy is noeviction and persistence (AOF) is on, or usage events not yet settled can be lost')
    }
    for (const warning of found.warnings) app.log.warn({ redis: { maxmemoryPolicy: found.maxmemoryPolicy, appendonly: found.appendonly, save: found.save } }, warning)
  } catch (err) {
    app.log.info({ err }, 'could not check the Redis configuration')
  }
}

async function withTimeout<T> (p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms) })
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** A readiness check: resolves when healthy, throws with a reason otherwise. */
export type ReadinessCheck = () => Promise<void>

/** Options of {@link healthPlugin}. */
export interface HealthPluginOptions {
  /** Checks besides postgres, redis and migrations. */
  extraChecks?: Record<string, ReadinessCheck>
  /** Per-check time limit; default 2000 ms. */
  timeoutMs?: number
}

/**
 * `GET /healthz`: the process is alive. `GET /readyz`: Postgres and Redis answer and the schema is
 * at this build's latest migration; 503 with the failing checks otherwise. On close, connections
 * are let go as soon as their last answer is sent.
 */
export const healthPlugin = fp(async (app: FastifyInstance, opts: HealthPluginOptions) => {
  let migrated = false
  const checks: Record<string, ReadinessCheck> = {
    postgres: async () => await pingDb(app.db),
    redis: async () => {
      if (refusedRedis.has(app.redis)) throw new Error(REDIS_CLUSTER_REFUSED)
      await app.redis.ping()
    },
    migrations: async () => {
      if (migrated) return
      const pending = await pendingMigrations(app.db)
      if (pending.length > 0) throw new Error(`pending: ${pending.join(', ')}`)
      migrated = true
    },
    ...opts.extraChecks
  }
  const timeoutMs = opts.timeoutMs ?? 2_000

  // Shutdown, as the orchestrator sees it: Node closes idle keep-alive connections once, when
  // close() starts. A connection whose request was still running then would stay open for its
  // keep-alive timeout (72 s) after answering and hold the process; idle ones are closed until
  // the server has closed.
  let reaper: NodeJS.Timeout | undefined
  app.addHook('preClose', (done) => {
    if (app.server.listening) {
      reaper = setInterval(() => { app.server.closeIdleConnections() }, 50)
      reaper.unref()
    }
    done()
  })
  app.addHook('onClose', (_instance, done) => {
    clearInterval(reaper)
    done()
  })

  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }))
  app.get('/readyz', { logLevel: 'warn' }, async (_req, reply) => {
    const results = await Promise.all(Object.entries(checks).map(async ([name, check]) => {
      try {
        await withTimeout(check(), timeoutMs, name)
        return [name, { ok: true }] as const
      } catch (err) {
        return [name, { ok: false, detail: (err as Error).message }] as const
      }
    }))
    const ready = results.every(([, r]) => r.ok)
    return await reply.code(ready ? 200 : 503).send({ ready, checks: Object.fromEntries(results) })
  })
}, { name: 'health', fastify: '5.x', dependencies: ['db', 'redis'] })

/**
 * Connection options for BullMQ from REDIS_URL (see {@link redisOptions}: one server or Sentinel). BullMQ needs options rather than a shared
 * ioredis instance (it opens its own blocking connections, and a shared one keeps the process alive).
 */
export function bullConnection (url: string): RedisTarget & { maxRetriesPerRequest: null } {
  return { ...redisOptions(url), maxRetriesPerRequest: null }
}
