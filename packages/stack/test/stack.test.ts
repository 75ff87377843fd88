import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'
import pg from 'pg'
import { freePort } from '@modelgate/testing'
import t from 'tap'
import { startEmbedded } from '../src/postgres.js'
import { startRedisServer } from '../src/redis.js'
import { resolveSecrets } from '../src/secrets.js'
import { Supervisor } from '../src/supervisor.js'

async function query (url: string, text: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows
  } finally {
    await client.end()
  }
}

t.test('starts real Postgres under the data folder and reuses its data on the next start', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'mg-stack-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const port = await freePort()
  const first = await startEmbedded(join(dir, 'postgres'), port, () => {})
  t.teardown(() => first.stop())
  t.match(first.url, `127.0.0.1:${port}/modelgate`)
  await query(first.url, 'create table kept (v int); insert into kept values (42)')
  await first.stop()

  const second = await startEmbedded(join(dir, 'postgres'), port, () => {})
  t.teardown(() => second.stop())
  t.same(await query(second.url, 'select v from kept'), [{ v: 42 }], 'data survives a restart')
  const version = await query(second.url, 'show server_version_num') as Array<{ server_version_num: string }>
  t.ok(Number(version[0]?.server_version_num) >= 150000, 'a real Postgres server answers')
})

t.test('starts redis-server with its files under the data folder', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'mg-stack-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const port = await freePort()
  const redis = await startRedisServer(join(dir, 'redis'), port, () => {})
  t.teardown(() => redis.stop())
  t.equal(redis.url, `redis://127.0.0.1:${port}`)
  const { Redis } = await import('ioredis')
  const client = new Redis(redis.url)
  await client.set('k', 'v')
  t.equal(await client.get('k'), 'v')
  client.disconnect()
  await redis.stop()
  t.ok((await stat(join(dir, 'redis'))).isDirectory())
})

t.test('generates secrets once and keeps them', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'mg-stack-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const a = await resolveSecrets(dir, {})
  t.ok(a.SESSION_SECRET.length >= 32 && a.CRYPTO_SECRET.length >= 32)
  t.not(a.SESSION_SECRET, a.CRYPTO_SECRET)
  t.same(await resolveSecrets(dir, {}), a, 'the second start reads the same secrets')
  const mode = (await stat(join(dir, 'secrets.json'))).mode & 0o777
  t.equal(mode, 0o600, 'only the owner can read the secrets file')
  const given = 'x'.repeat(40)
  t.equal((await resolveSecrets(dir, { SESSION_SECRET: given })).SESSION_SECRET, given, 'the environment wins')
  t.notMatch(await readFile(join(dir, 'secrets.json'), 'utf8'), given, 'a secret from the environment is not written to disk')
})

t.test('the supervisor restarts a service that crashes and stops it on request', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'mg-stack-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const script = join(dir, 'svc.mjs')
  const counter = join(dir, 'count')
  const { writeFile, appendFile } = await import('node:fs/promises')
  await writeFile(script, `
    import { appendFileSync, readFileSync } from 'node:fs'
    appendFileSync(${JSON.stringify(counter)}, 'x')
    if (readFileSync(${JSON.stringify(counter)}, 'utf8').length < 2) process.exit(3)
    process.on('SIGTERM', () => { appendFileSync(${JSON.stringify(counter)}, 'T'); process.exit(0) })
    setInterval(() => {}, 1000)
  `)
  await appendFile(counter, '')
  let gaveUp = ''
  const sup = new Supervisor({ onGiveUp: (n) => { gaveUp = n }, color: false })
  sup.start({ name: 'svc', script, env: {} })
  const deadline = Date.now() + 10_000
  while ((await readFile(counter, 'utf8')).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  t.equal(await readFile(counter, 'utf8'), 'xx', 'crashed once, restarted once')
  await new Promise((r) => setTimeout(r, 200))
  await sup.stopAll(['svc'], 5_000)
  t.equal(await readFile(counter, 'utf8'), 'xxT', 'stopped with SIGTERM')
  t.equal(gaveUp, '')
})

t.test('moves the cluster to a free port when another server took its port', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'mg-stack-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const port = await freePort()
  const first = await startEmbedded(join(dir, 'postgres'), port, () => {})
  await query(first.url, 'create table kept (v int); insert into kept values (7)')
  await first.stop()
  const squatter = createServer().listen(port, '127.0.0.1')
  t.teardown(() => { squatter.close() })
  const lines: string[] = []
  const second = await startEmbedded(join(dir, 'postgres'), port, (l) => lines.push(l))
  t.teardown(() => second.stop())
  t.notMatch(second.url, `:${port}/`)
  t.same(await query(second.url, 'select v from kept'), [{ v: 7 }], 'same data on the new port')
  t.match(lines.join('\n'), `port ${port} is taken`)
})
