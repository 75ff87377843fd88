import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDb, migrateToLatest, sql } from '@modelgate/db'
import { createTestDatabase } from '@modelgate/testing'
import t from 'tap'

const START = new URL('../dist/start.js', import.meta.url).pathname
const MIGRATE = new URL('../../db/dist/cli.js', import.meta.url).pathname

interface Run { code: number | null, stdout: string, stderr: string }

/** Runs a CLI to its end (at most 30 s) with only `env` (and PATH) in its environment. */
async function run (script: string, args: string[], env: Record<string, string>): Promise<Run> {
  return await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (b: Buffer) => { stdout += b.toString() })
    child.stderr.on('data', (b: Buffer) => { stderr += b.toString() })
    const timer = setTimeout(() => { child.kill('SIGKILL') }, 30_000)
    child.once('error', reject)
    child.once('exit', (code) => {
      clearTimeout(timer)
      // Let the pipes finish.
      setImmediate(() => { resolve({ code, stdout, stderr }) })
    })
  })
}

async function hasMigrationTable (url: string): Promise<boolean> {
  const db = createDb(url, { max: 1 })
  try {
    const r = await sql<{ n: string | null }>`select to_regclass('public.kysely_migration')::text as n`.execute(db)
    return r.rows[0]?.n != null
  } finally {
    await db.destroy()
  }
}

t.test('npm start --help prints the usage and exits 0 without starting anything', async (t) => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'mg-start-help-')), 'data')
  t.teardown(() => { rmSync(dataDir, { recursive: true, force: true }) })
  for (const flag of ['--help', '-h']) {
    // An unreachable database: starting anything would fail or create DATA_DIR.
    const r = await run(START, [flag], { DATA_DIR: dataDir, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' })
    t.equal(r.code, 0, `${flag}: exit code 0`)
    t.match(r.stdout, /^Usage: npm start/, `${flag}: usage on stdout`)
    t.match(r.stdout, /DATABASE_URL/, `${flag}: the settings it reads are listed`)
    t.equal(r.stderr, '', `${flag}: nothing on stderr`)
  }
  t.notOk(existsSync(dataDir), 'nothing was created under DATA_DIR')
  const bad = await run(START, ['--frobnicate'], { DATA_DIR: dataDir })
  t.equal(bad.code, 2, 'an unknown argument exits 2')
  t.match(bad.stderr, /unknown argument --frobnicate/, 'and says which')
  t.notOk(existsSync(dataDir), 'without starting anything')
})

t.test('migrate --help prints the usage and applies nothing; migrate status lists applied and pending', async (t) => {
  const url = await createTestDatabase(t)
  for (const args of [['--help'], ['-h'], ['help'], ['status', '--help']]) {
    const r = await run(MIGRATE, args, { DATABASE_URL: url })
    t.equal(r.code, 0, `${args.join(' ')}: exit code 0`)
    t.match(r.stdout, /^Usage: npm run migrate/, `${args.join(' ')}: usage on stdout`)
  }
  t.notOk(await hasMigrationTable(url), 'help applied nothing')

  const fresh = await run(MIGRATE, ['status'], { DATABASE_URL: url })
  t.equal(fresh.code, 0, 'status on an empty database: exit 0')
  t.match(fresh.stdout, /applied \(0\):/, 'nothing applied')
  const pendingCount = Number(/pending \((\d+)\):/.exec(fresh.stdout)?.[1])
  t.ok(pendingCount > 0, `every migration pending (${pendingCount})`)
  t.match(fresh.stdout, /2026_11_27_000000_add_task_billing/, 'a pending migration by name')
  t.notOk(await hasMigrationTable(url), 'status changed nothing')

  const db = createDb(url, { max: 2 })
  await migrateToLatest(db)
  await db.destroy()
  const after = await run(MIGRATE, ['status'], { DATABASE_URL: url })
  t.equal(after.code, 0, 'status on a current database: exit 0')
  t.match(after.stdout, new RegExp(`applied \\(${pendingCount}\\):`), 'all applied')
  t.match(after.stdout, /pending \(0\):/, 'none pending')
  t.match(after.stdout, /add_task_billing {2}\d{4}-\d\d-\d\dT/, 'applied ones with when they ran')

  t.notMatch(after.stdout, /unknown to this build/, 'nothing unknown')

  // A newer release migrated this database: its migration is listed apart.
  const db2 = createDb(url, { max: 1 })
  await sql`insert into kysely_migration (name, timestamp) values ('2099_01_01_000000_from_the_future', now()::text)`.execute(db2)
  await db2.destroy()
  const newer = await run(MIGRATE, ['status'], { DATABASE_URL: url })
  t.equal(newer.code, 0, 'status with a migration of a newer release: exit 0')
  t.match(newer.stdout, /applied but unknown to this build, from a newer release \(1\):\n {2}2099_01_01_000000_from_the_future/, 'listed as unknown to this build')

  const down = await run(MIGRATE, ['status'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
  t.equal(down.code, 1, 'status without a reachable database: exit 1')
  t.match(down.stderr, /ECONNREFUSED/, 'with the connection error')

  const unknown = await run(MIGRATE, ['sideways'], { DATABASE_URL: url })
  t.equal(unknown.code, 2, 'an unknown command exits 2')
  t.match(unknown.stderr, /unknown command sideways/, 'and says which')
})
