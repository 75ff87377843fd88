import { loadTestConfig } from '@modelgate/config'
import type * as PgModule from '@testcontainers/postgresql'
import type * as RedisModule from '@testcontainers/redis'

/**
 * Where the test Postgres and Redis live: TEST_DATABASE_URL / TEST_REDIS_URL when set; otherwise
 * the servers on their standard local ports when they answer (Postgres as `postgres`, with trust
 * auth or the password `postgres`; Redis without a password); otherwise containers started
 * through testcontainers when a Docker engine answers (one pair per test process, removed by
 * testcontainers' reaper when the process exits).
 */
export interface TestServers {
  /** Admin URL of a Postgres server on which test databases may be created and dropped. */
  databaseUrl: string
  redisUrl: string
}

let servers: Promise<TestServers> | undefined
let shared: Promise<string | undefined> | undefined

const HOW_TO =
  'Tests need a real Postgres and Redis. None answered on 127.0.0.1:5432 (user postgres, trust auth or password postgres) ' +
  'and 127.0.0.1:6379: start them (Debian: apt-get install postgresql redis-server), or set TEST_DATABASE_URL ' +
  '(e.g. postgres://postgres@127.0.0.1:5432/postgres) and TEST_REDIS_URL (e.g. redis://127.0.0.1:6379), ' +
  'or run a Docker engine so testcontainers can start them.'

/** Admin URLs tried on the standard local port, in order. */
const LOCAL_POSTGRES = ['postgres://postgres@127.0.0.1:5432/postgres', 'postgres://postgres:postgres@127.0.0.1:5432/postgres']
const LOCAL_REDIS = 'redis://127.0.0.1:6379'

/** The first local Postgres admin URL that connects and may create databases, or undefined. */
async function localPostgres (): Promise<string | undefined> {
  const { default: pg } = await import('pg')
  for (const url of LOCAL_POSTGRES) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
    client.on('error', () => {})
    try {
      await client.connect()
      const { rows } = await client.query<{ ok: boolean }>('select rolcreatedb or rolsuper as ok from pg_roles where rolname = current_user')
      if (rows[0]?.ok === true) return url
    } catch {
      // Not this one: refused, or the password is wrong.
    } finally {
      await client.end().catch(() => {})
    }
  }
  return undefined
}

/** The local Redis URL when a server there answers PING, or undefined. */
async function localRedis (): Promise<string | undefined> {
  const { Redis } = await import('ioredis')
  const redis = new Redis(LOCAL_REDIS, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null })
  redis.on('error', () => {})
  try {
    await redis.connect()
    return await redis.ping() === 'PONG' ? LOCAL_REDIS : undefined
  } catch {
    return undefined
  } finally {
    redis.disconnect()
  }
}

async function startContainers (need: { postgres: boolean, redis: boolean }): Promise<Partial<TestServers>> {
  let pgMod: typeof PgModule
  let redisMod: typeof RedisModule
  try {
    // Dynamic: testcontainers is heavy and only needed when no URL is given.
    pgMod = await import('@testcontainers/postgresql')
    redisMod = await import('@testcontainers/redis')
  } catch (err) {
    throw new Error(`${HOW_TO} (testcontainers could not be loaded: ${(err as Error).message})`, { cause: err })
  }
  try {
    const [pgc, rc] = await Promise.all([
      need.postgres ? new pgMod.PostgreSqlContainer('postgres:16-alpine').start() : undefined,
      need.redis ? new redisMod.RedisContainer('redis:7-alpine').start() : undefined
    ])
    return { databaseUrl: pgc?.getConnectionUri(), redisUrl: rc?.getConnectionUrl() }
  } catch (err) {
    throw new Error(`${HOW_TO} (no container runtime: ${(err as Error).message})`, { cause: err })
  }
}

/**
 * The admin URL of a Postgres server that every test process of a run shares (TEST_DATABASE_URL,
 * or the local standard port), or undefined when each process would start its own container.
 */
export async function sharedTestPostgres (): Promise<string | undefined> {
  shared ??= (async () => loadTestConfig().TEST_DATABASE_URL ?? await localPostgres())()
  return await shared
}

/** Resolves the test servers once per process. */
export async function testServers (): Promise<TestServers> {
  servers ??= (async () => {
    const cfg = loadTestConfig()
    let databaseUrl = await sharedTestPostgres()
    let redisUrl = cfg.TEST_REDIS_URL ?? await localRedis()
    if (databaseUrl === undefined || redisUrl === undefined) {
      const started = await startContainers({ postgres: databaseUrl === undefined, redis: redisUrl === undefined })
      databaseUrl ??= started.databaseUrl
      redisUrl ??= started.redisUrl
    }
    if (databaseUrl === undefined || redisUrl === undefined) throw new Error(HOW_TO)
    return { databaseUrl, redisUrl }
  })()
  return await servers
}
