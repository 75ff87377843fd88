import { randomBytes } from 'node:crypto'
import { type AddressInfo, createServer } from 'node:net'
import { Redis } from 'ioredis'
import pg from 'pg'
import { testServers } from './servers.js'

/** The part of a tap `Test` the helpers need. */
export interface Teardown {
  teardown: (fn: () => unknown) => void
}

function uniqueName (prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`
}

/** Replaces the database name in a Postgres URL. */
export function withDatabase (url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

async function adminQuery (adminUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/**
 * A new, empty Postgres database for one test (or test file), dropped at teardown.
 * Returns its connection URL.
 */
export async function createTestDatabase (t: Teardown): Promise<string> {
  const { databaseUrl } = await testServers()
  const name = uniqueName('mg_test')
  await adminQuery(databaseUrl, `create database ${name}`)
  t.teardown(async () => {
    await adminQuery(databaseUrl, `drop database if exists ${name} with (force)`)
  })
  return withDatabase(databaseUrl, name)
}

/** A Redis URL plus a key prefix unique to this test; keys under the prefix are deleted at teardown. */
export interface TestRedis {
  url: string
  /** Ends with ':'. */
  keyPrefix: string
}

export async function createTestRedis (t: Teardown): Promise<TestRedis> {
  const { redisUrl } = await testServers()
  const keyPrefix = `${uniqueName('mgtest')}:`
  t.teardown(async () => {
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
    try {
      await redis.connect()
      let cursor = '0'
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 500)
        cursor = next
        if (keys.length > 0) await redis.del(...keys)
      } while (cursor !== '0')
    } finally {
      redis.disconnect()
    }
  })
  return { url: redisUrl, keyPrefix }
}

/** 32+ character secrets for tests. */
export const TEST_SECRETS = {
  SESSION_SECRET: 'test-session-secret-0123456789abcdef',
  CRYPTO_SECRET: 'test-crypto-secret-0123456789abcdef'
} as const

/**
 * Environment for one service under test: a fresh database, a unique Redis prefix, test
 * secrets and quiet logs. Pass it to the service's config loader.
 */
export async function createServiceEnv (t: Teardown, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const [databaseUrl, redis] = await Promise.all([createTestDatabase(t), createTestRedis(t)])
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: redis.keyPrefix,
    LOG_LEVEL: 'silent',
    // No metrics listener on the default ports: tests run many services at once.
    METRICS_PORT: '0',
    ...TEST_SECRETS,
    ...extra
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo
      srv.close(() => resolve(port))
    })
    srv.once('error', reject)
  })
}
