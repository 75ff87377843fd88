import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { type AddressInfo, createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadTestConfig } from '@modelgate/config'
import { Redis } from 'ioredis'
import pg from 'pg'
import { sharedTestPostgres, testServers } from './servers.js'

/** The part of a tap `Test` the helpers need. */
export interface Teardown {
  teardown: (fn: () => unknown) => void
}

function uniqueName (prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`
}

/**
 * Under the suite's runner (scripts/test.mjs gives each test file a tag in MODELGATE_TEST_DB_TAG),
 * a test database outlives its test: it is named `mg_test_<tag>_...` and the runner drops a file's
 * databases after the file has ended, several at once. Postgres 15 forces a checkpoint on every
 * DROP DATABASE, so dropping one per test made the server write and fsync every running test's
 * pages hundreds of times a run. Without the tag (a file run on its own), teardown drops it.
 */
const DB_TAG = loadTestConfig().MODELGATE_TEST_DB_TAG

/** A new test database's name, and whether its test's teardown drops it. */
async function testDatabaseName (databaseUrl: string): Promise<{ name: string, dropAtTeardown: boolean }> {
  if (DB_TAG !== undefined && databaseUrl === await sharedTestPostgres()) return { name: `mg_test_${DB_TAG}_${randomBytes(6).toString('hex')}`, dropAtTeardown: false }
  return { name: uniqueName('mg_test'), dropAtTeardown: true }
}

/**
 * Drops the test databases of the runner's tags `tags` (files that have ended), `concurrency` at
 * once so that their forced checkpoints coincide. Answers how many were dropped.
 */
export async function dropTaggedTestDatabases (adminUrl: string, tags: string[], concurrency = 8): Promise<number> {
  const wanted = tags.filter((tag) => /^[a-z0-9]{1,40}$/.test(tag))
  if (wanted.length === 0) return 0
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  let names: string[]
  try {
    const { rows } = await client.query<{ datname: string }>(
      'select datname from pg_database where split_part(datname, \'_\', 3) = any($1::text[]) and datname like \'mg\\_test\\_%\'', [wanted])
    names = rows.map((r) => r.datname)
  } finally {
    await client.end()
  }
  const queue = [...names]
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      await adminQuery(adminUrl, `drop database if exists ${name} with (force)`)
    }
  }))
  return names.length
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
  const { name, dropAtTeardown } = await testDatabaseName(databaseUrl)
  await adminQuery(databaseUrl, `create database ${name}`)
  if (dropAtTeardown) {
    t.teardown(async () => {
      await adminQuery(databaseUrl, `drop database if exists ${name} with (force)`)
    })
  }
  return withDatabase(databaseUrl, name)
}

/** What the template needs of @modelgate/db (imported by name: db's own tests use this package). */
interface DbModule {
  createDb: (url: string) => { destroy: () => Promise<void> }
  migrateToLatest: (db: never) => Promise<unknown>
}

const TEMPLATE_PREFIX = 'mg_tmpl_'
/** Session advisory lock under which one process at a time looks for, or builds, the template. */
const TEMPLATE_LOCK_KEY = 0x6d67746d706c6174n
/** Templates of other migrations are dropped once this old (another checkout may still copy them). */
const STALE_TEMPLATE_MS = 60 * 60_000

let template: Promise<string> | undefined

/**
 * The built migrations' fingerprint and the UTC month: a template is reused only by the same
 * migrations, in the month it was built (migrating creates the log partitions around the month).
 */
function migrationsHash (): string {
  const dir = join(dirname(fileURLToPath(import.meta.resolve('@modelgate/db'))), 'migrations')
  const hash = createHash('sha256').update(new Date().toISOString().slice(0, 7))
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js')).sort()) hash.update(file).update(readFileSync(join(dir, file)))
  return hash.digest('hex').slice(0, 16)
}

/**
 * The name of a database at the latest migration that new test databases are copied from. The
 * first process to need it builds it (under an advisory lock, so parallel test files wait for
 * one build) and marks it a template that accepts no connections, as `create database ...
 * template` requires.
 */
async function migratedTemplate (adminUrl: string): Promise<string> {
  const hash = migrationsHash()
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY])
    const { rows } = await client.query<{ datname: string }>('select datname from pg_database where datname like $1', [`${TEMPLATE_PREFIX}%`])
    const found = rows.find((r) => r.datname.startsWith(`${TEMPLATE_PREFIX}${hash}_`) && !r.datname.endsWith('_building'))
    if (found !== undefined) return found.datname
    for (const { datname } of rows) {
      const made = parseInt(datname.slice(TEMPLATE_PREFIX.length + 17), 36)
      if (!(Date.now() - made > STALE_TEMPLATE_MS)) continue
      // Best effort: a template being copied right now is left for a later run.
      await client.query(`alter database ${datname} is_template false`).then(async () => await client.query(`drop database if exists ${datname}`)).catch(() => undefined)
    }
    const name = `${TEMPLATE_PREFIX}${hash}_${Date.now().toString(36)}`
    const building = `${name}_building`
    await client.query(`drop database if exists ${building} with (force)`)
    await client.query(`create database ${building}`)
    const dbPackage = '@modelgate/db'
    const { createDb, migrateToLatest } = await import(dbPackage) as DbModule
    const db = createDb(withDatabase(adminUrl, building))
    try {
      await migrateToLatest(db as never)
    } finally {
      await db.destroy()
    }
    await client.query(`alter database ${building} rename to ${name}`)
    await client.query(`alter database ${name} with is_template true allow_connections false`)
    return name
  } finally {
    await client.end()
  }
}

/**
 * A new Postgres database at the latest migration, dropped at teardown: a copy of a migrated
 * template (a copy costs Postgres about a sixth of the CPU of creating and migrating). Returns its
 * connection URL. Tests of migrations themselves use {@link createTestDatabase}.
 */
export async function createMigratedDatabase (t: Teardown): Promise<string> {
  const { databaseUrl } = await testServers()
  template ??= migratedTemplate(databaseUrl)
  const source = await template
  const { name, dropAtTeardown } = await testDatabaseName(databaseUrl)
  await adminQuery(databaseUrl, `create database ${name} template ${source}`)
  if (dropAtTeardown) {
    t.teardown(async () => {
      await adminQuery(databaseUrl, `drop database if exists ${name} with (force)`)
    })
  }
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
 * Environment for one service under test: a fresh database at the latest migration, a unique Redis prefix, test
 * secrets and quiet logs. Pass it to the service's config loader.
 */
export async function createServiceEnv (t: Teardown, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const [databaseUrl, redis] = await Promise.all([createMigratedDatabase(t), createTestRedis(t)])
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: redis.keyPrefix,
    LOG_LEVEL: 'silent',
    // No metrics listener on the default ports: tests run many services at once.
    METRICS_PORT: '0',
    // The well-known root / 123456 the tests sign in with; '' (unset) leaves the database empty for first-run setup.
    INITIAL_ROOT_PASSWORD: '123456',
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
