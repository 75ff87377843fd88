import { loadTestConfig } from '@modelgate/config'
import type * as PgModule from '@testcontainers/postgresql'
import type * as RedisModule from '@testcontainers/redis'

/**
 * Where the test Postgres and Redis live: TEST_DATABASE_URL / TEST_REDIS_URL when set, otherwise
 * containers started through testcontainers when a Docker engine answers (one pair per test
 * process, removed by testcontainers' reaper when the process exits).
 */
export interface TestServers {
  /** Admin URL of a Postgres server on which test databases may be created and dropped. */
  databaseUrl: string
  redisUrl: string
}

let servers: Promise<TestServers> | undefined

const HOW_TO =
  'Tests need a real Postgres and Redis. Set TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres) ' +
  'and TEST_REDIS_URL (e.g. redis://127.0.0.1:6379), or run a Docker engine so testcontainers can start them.'

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

/** Resolves the test servers once per process. */
export async function testServers (): Promise<TestServers> {
  servers ??= (async () => {
    const cfg = loadTestConfig()
    let databaseUrl = cfg.TEST_DATABASE_URL
    let redisUrl = cfg.TEST_REDIS_URL
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
