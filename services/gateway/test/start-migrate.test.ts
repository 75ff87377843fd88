import { spawn } from 'node:child_process'
import { createDb, MIGRATION_LOCK_KEY, pendingMigrations, poolFigures, sql } from '@modelgate/db'
import { createServiceEnv, createTestDatabase, freePort, until } from '@modelgate/testing'
import pg from 'pg'
import t, { type Test } from 'tap'
import { buildGateway, seedToken, seedUser } from './fixtures.js'

const SERVER = new URL('../dist/server.js', import.meta.url).pathname

interface Body {
  error?: { type?: string, code?: string }
  checks?: Record<string, { ok: boolean, detail?: string } | undefined>
  object?: string
}

async function get (url: string, headers: Record<string, string> = {}): Promise<{ status: number, body: Body }> {
  const res = await fetch(url, { headers })
  const text = await res.text()
  let body: Body = {}
  try { body = JSON.parse(text) as Body } catch { /* not JSON */ }
  return { status: res.status, body }
}

/** A service environment on an empty database (createServiceEnv's is migrated already): the migrations have work to do. */
async function emptyDatabaseEnv (t: Test): Promise<Record<string, string>> {
  return { ...await createServiceEnv(t), DATABASE_URL: await createTestDatabase(t) }
}

t.test('listen, then migrate: alive and not ready while migrations wait, the API after', async (t) => {
  const env = await emptyDatabaseEnv(t)
  // Hold the migration lock from another session: the gateway's migration waits on it, as a
  // replica does while another runs a long migration.
  const holder = new pg.Client({ connectionString: env['DATABASE_URL'] })
  await holder.connect()
  t.teardown(async () => { await holder.end().catch(() => {}) })
  await holder.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()])

  const port = await freePort()
  const child = spawn(process.execPath, [SERVER], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', CONTROL_PLANE_URL: 'http://127.0.0.1:1' },
    stdio: 'ignore'
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const base = `http://127.0.0.1:${port}`

  t.ok(await until(async () => (await get(`${base}/healthz`).catch(() => ({ status: 0 }))).status === 200, 90_000), '/healthz answers 200 while the migration waits')
  const waiting = await get(`${base}/readyz`)
  t.equal(waiting.status, 503, '/readyz answers 503')
  t.equal(waiting.body.checks?.migrating?.ok, false, 'with the migrating check failing')
  const api = await get(`${base}/v1/models`, { authorization: 'Bearer sk-anything' })
  t.equal(api.status, 503, 'a route that needs the database answers 503')
  t.equal(api.body.error?.type, 'service_unavailable', 'in the OpenAI error shape')
  t.equal(api.body.error?.code, 'starting', 'saying the gateway is starting')
  const consolePath = await fetch(`${base}/api/status`)
  t.equal(consolePath.status, 503, 'so does the path proxied to the control plane')
  t.equal(consolePath.headers.get('retry-after'), '5', 'with Retry-After')
  await consolePath.arrayBuffer()

  // Still waiting a while later: nothing applied, the process alive.
  const db = createDb(env['DATABASE_URL']!, { max: 1 })
  t.teardown(async () => { await db.destroy() })
  t.ok((await pendingMigrations(db)).length > 0, 'no migration ran while the lock is held')
  t.equal(child.exitCode, null, 'the process is alive')
  t.equal((await get(`${base}/healthz`)).status, 200, '/healthz still 200')

  await holder.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()])
  t.ok(await until(async () => (await get(`${base}/readyz`).catch(() => ({ status: 0 }))).status === 200, 90_000), '/readyz answers 200 once migrations have finished')
  t.same(await pendingMigrations(db), [], 'every migration applied')
  const ready = await get(`${base}/readyz`)
  t.equal(ready.body.checks?.migrating, undefined, 'the service\'s own readiness checks answer now')
  t.equal(ready.body.checks?.migrations?.ok, true, 'including the schema check')

  // The API works: a token seeded now is found (cache miss goes to Postgres).
  const user = await seedUser(db)
  const { key } = await seedToken(db, user.id)
  const models = await get(`${base}/v1/models`, { authorization: `Bearer ${key}` })
  t.equal(models.status, 200, 'GET /v1/models with a token: 200')
  t.equal(models.body.object, 'list', 'the model list')
  t.equal((await get(`${base}/v1/models`, { authorization: 'Bearer sk-nope' })).status, 401, 'a wrong key: 401 from the relay itself')
})

t.test('a failed migration exits non-zero with the error', async (t) => {
  const env = await emptyDatabaseEnv(t)
  // A table in the way of the first migration.
  const db = createDb(env['DATABASE_URL']!, { max: 1 })
  await sql`create table users (id int)`.execute(db)
  await db.destroy()
  const port = await freePort()
  let out = ''
  const child = spawn(process.execPath, [SERVER], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', CONTROL_PLANE_URL: 'http://127.0.0.1:1' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  child.stdout.on('data', (b: Buffer) => { out += b.toString() })
  child.stderr.on('data', (b: Buffer) => { out += b.toString() })
  t.teardown(() => { child.kill('SIGKILL') })
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => { resolve(c) }))
  t.equal(code, 1, 'exit code 1')
  t.match(out, /failed to start/, 'logged as a failed start')
  t.match(out, /migration 2026_11_22_000000_create_core_tables failed: relation \\"users\\" already exists/, 'with the migration\'s error')
})

t.test('MIGRATE_DATABASE_URL is the connection migrations use', async (t) => {
  const env = await createServiceEnv(t)
  const port = await freePort()
  let out = ''
  const child = spawn(process.execPath, [SERVER], {
    env: { ...env, MIGRATE_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/direct', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', CONTROL_PLANE_URL: 'http://127.0.0.1:1' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  child.stdout.on('data', (b: Buffer) => { out += b.toString() })
  child.stderr.on('data', (b: Buffer) => { out += b.toString() })
  t.teardown(() => { child.kill('SIGKILL') })
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => { resolve(c) }))
  t.equal(code, 1, 'an unreachable migration URL stops the start (DATABASE_URL itself works)')
  t.match(out, /ECONNREFUSED 127\.0\.0\.1:1/, 'the error names the migration URL\'s address')
})

t.test('PG_POOL_MAX sizes the process\'s Postgres pool (10 by default)', async (t) => {
  const sized = await buildGateway(t, { PG_POOL_MAX: '3' })
  t.equal(poolFigures(sized.app.db)?.max, 3, 'PG_POOL_MAX=3: pool.options.max is 3')
  const plain = await buildGateway(t)
  t.equal(poolFigures(plain.app.db)?.max, 10, 'unset: 10, as before')
})
