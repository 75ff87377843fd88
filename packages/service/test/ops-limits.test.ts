import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { createTestDatabase, freePort, until } from '@modelgate/testing'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { loadControlPlaneConfig, loadGatewayConfig } from '@modelgate/config'
import { bullConnection, checkRedisDurability, dbPlugin, healthPlugin, redisOptions, redisPlugin, trustProxyOption } from '../src/index.js'

async function tcpOpen (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    s.once('connect', () => { s.destroy(); resolve(true) })
    s.once('error', () => { resolve(false) })
  })
}

/** A private redis-server (or Sentinel, with `--sentinel` and a config file) with `args`; killed at teardown. */
async function ownRedis (t: Test, args: string[], opts: { sentinelConf?: (port: number, dir: string) => string } = {}): Promise<{ port: number, url: string, dir: string }> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'))
  let argv = ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--loglevel', 'warning', ...args]
  if (opts.sentinelConf !== undefined) {
    const conf = join(dir, 'sentinel.conf')
    writeFileSync(conf, opts.sentinelConf(port, dir))
    argv = [conf, '--sentinel']
  }
  const child: ChildProcess = spawn('redis-server', argv, { stdio: 'ignore' })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })
  if (!await until(async () => await tcpOpen(port))) throw new Error(`redis-server ${argv.join(' ')} did not start`)
  return { port, url: `redis://127.0.0.1:${port}`, dir }
}

function client (t: Test, url: string): Redis {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 })
  t.teardown(() => { r.disconnect() })
  return r
}

/** A Fastify app whose log lines are collected. */
function loggedApp (): { app: ReturnType<typeof Fastify>, lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk: Buffer, _enc, cb) { for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l)); cb() } })
  return { app: Fastify({ logger: { level: 'info', stream } }), lines }
}

t.test('configuration: trusted proxies by address or hop count, PG_POOL_MAX, Redis URLs', async (t) => {
  const base = { DATABASE_URL: 'postgres://u@h/db', REDIS_URL: 'redis://h', CRYPTO_SECRET: 'c8Vx2Lq9Rz4Tn7Wb1Ym6Kd3Hf5Js0PgQ', SESSION_SECRET: 's3Nh8Bv1Cx6Zq9Wl2Er5Ty7Ui4Op0AsD' }
  t.equal(trustProxyOption(''), false, 'empty: trust nobody')
  t.equal(trustProxyOption('0'), false, '0: trust nobody')
  t.equal(trustProxyOption('10.0.0.0/8, loopback'), '10.0.0.0/8,loopback', 'addresses and names go to Fastify as a list')
  const hops = trustProxyOption('2')
  t.type(hops, 'function', 'a hop count becomes a function (Fastify trusts nobody for a plain number)')
  const fn = hops as (a: string, i: number) => boolean
  t.same([fn('198.51.100.1', 0), fn('198.51.100.1', 1), fn('10.0.0.1', 2)], [true, true, false], 'the two nearest hops, whatever their addresses')
  t.equal(loadGatewayConfig(base).GATEWAY_TRUST_PROXY, '', 'the gateway trusts no proxy by default')
  t.equal(loadGatewayConfig({ ...base, GATEWAY_TRUST_PROXY: '2' }).GATEWAY_TRUST_PROXY, '2', 'a hop count is accepted')
  t.throws(() => loadGatewayConfig({ ...base, GATEWAY_TRUST_PROXY: '1,10.0.0.1' }), /GATEWAY_TRUST_PROXY must be a hop count, or addresses/, 'a count mixed with addresses is refused')
  t.equal(loadControlPlaneConfig({ ...base, TRUST_PROXY: '1' }).TRUST_PROXY, '1', 'the control plane takes a hop count too')
  t.equal(loadGatewayConfig(base).PG_POOL_MAX, 10, 'PG_POOL_MAX: 10 by default')
  t.throws(() => loadGatewayConfig({ ...base, PG_POOL_MAX: '0' }), /PG_POOL_MAX must be a whole number 1-1000/, 'at least 1')
  t.equal(loadGatewayConfig({ ...base, REDIS_URL: 'redis+sentinel://s1:26379,s2:26379/mymaster' }).REDIS_URL, 'redis+sentinel://s1:26379,s2:26379/mymaster', 'a Sentinel URL is accepted')
  t.throws(() => loadGatewayConfig({ ...base, REDIS_URL: 'redis+cluster://n1:7000' }), /REDIS_URL must be .*\(Redis Cluster is not supported\)/, 'a Cluster URL is refused at start, saying why')
})

t.test('redisOptions: one server, TLS, Sentinel; Cluster refused', async (t) => {
  t.same(redisOptions('redis://127.0.0.1:6380/2'), { host: '127.0.0.1', port: 6380, db: 2 })
  t.same(redisOptions('rediss://u:p%40ss@cache.example:6390'), { host: 'cache.example', port: 6390, username: 'u', password: 'p@ss', db: 0, tls: {} })
  t.same(redisOptions('redis://:secret@h'), { host: 'h', port: 6379, password: 'secret', db: 0 }, 'a password without a user')
  t.same(redisOptions('redis+sentinel://:pw@s1:26379,s2,[::1]:26380/mymaster/3?sentinelPassword=spw'), {
    sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26379 }, { host: '::1', port: 26380 }],
    name: 'mymaster',
    password: 'pw',
    db: 3,
    sentinelPassword: 'spw'
  }, 'Sentinel: addresses, master name, db, passwords')
  t.throws(() => redisOptions('redis+sentinel://s1:26379'), /redis\+sentinel:\/\/\[user:password@\]host:port/, 'a Sentinel URL without a master name')
  t.throws(() => redisOptions('redis+cluster://n1:7000,n2:7000'), /Redis Cluster is not supported/, 'Cluster refused')
  t.same(bullConnection('redis+sentinel://s1:1/m').sentinels, [{ host: 's1', port: 1 }], 'BullMQ gets the same options')
  t.equal(bullConnection('redis://h').maxRetriesPerRequest, null, 'and waits for Redis in its blocking calls')
})

t.test('the durability check reads real servers: eviction and persistence warned, CONFIG disabled tolerated, Cluster refused', async (t) => {
  const lru = await ownRedis(t, ['--maxmemory-policy', 'allkeys-lru', '--save', '', '--appendonly', 'no'])
  const durable = await ownRedis(t, ['--maxmemory-policy', 'noeviction', '--save', '', '--appendonly', 'yes'])
  const rdbOnly = await ownRedis(t, ['--maxmemory-policy', 'noeviction', '--save', '3600 1', '--appendonly', 'no'])
  const managed = await ownRedis(t, ['--rename-command', 'CONFIG', '', '--maxmemory-policy', 'allkeys-lru'])
  const cluster = await ownRedis(t, ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--save', '', '--appendonly', 'no'])

  const a = await checkRedisDurability(client(t, lru.url))
  t.equal(a.maxmemoryPolicy, 'allkeys-lru', 'policy read')
  t.equal(a.warnings.length, 2, 'two warnings')
  t.match(a.warnings[0], /maxmemory-policy is allkeys-lru: .*evict queued usage events/, 'eviction could drop queued usage events')
  t.match(a.warnings[1], /persistence is off/, 'persistence off')
  t.equal(a.cluster, false, 'not a cluster')

  const b = await checkRedisDurability(client(t, durable.url))
  t.same(b.warnings, [], 'noeviction with AOF: no warning')
  t.equal(b.appendonly, 'yes')
  const c = await checkRedisDurability(client(t, rdbOnly.url))
  t.same(c.warnings, [], 'RDB save points count as persistence')

  const d = await checkRedisDurability(client(t, managed.url))
  t.match(d.unreadable, /unknown command/i, 'CONFIG disabled: why nothing was read')
  t.same(d.warnings, [], 'and no warning claimed')

  const e = await checkRedisDurability(client(t, cluster.url))
  t.equal(e.cluster, true, 'a Redis Cluster node is recognised')

  // The plugin logs the warnings once it has connected.
  const logged = loggedApp()
  await logged.app.register(redisPlugin, { url: lru.url, keyPrefix: 'x:' })
  await logged.app.ready()
  t.teardown(() => logged.app.close())
  t.ok(await until(async () => logged.lines.some((l) => l['level'] === 40 && /maxmemory-policy is allkeys-lru/.test(String(l['msg'])))), 'redisPlugin warns about the eviction policy at start')
  t.ok(logged.lines.some((l) => l['level'] === 40 && /persistence is off/.test(String(l['msg']))), 'and about persistence')

  const quiet = loggedApp()
  await quiet.app.register(redisPlugin, { url: managed.url, keyPrefix: 'x:' })
  await quiet.app.ready()
  t.teardown(() => quiet.app.close())
  t.ok(await until(async () => quiet.lines.some((l) => /cannot read the Redis configuration/.test(String(l['msg'])))), 'CONFIG disabled: an info line says what to check by hand')
  t.notOk(quiet.lines.some((l) => l['level'] as number >= 40), 'nothing louder')
  await quiet.app.redis.set('k', 'v')
  t.equal(await quiet.app.redis.get('k'), 'v', 'and the service works')

  // A Cluster node: refused, the readiness check says why.
  const refused = loggedApp()
  await refused.app.register(dbPlugin, { url: await createTestDatabase(t), applicationName: 'test', migrate: false })
  await refused.app.register(redisPlugin, { url: cluster.url, keyPrefix: 'x:' })
  await refused.app.register(healthPlugin, {})
  await refused.app.ready()
  t.teardown(() => refused.app.close())
  t.ok(await until(async () => refused.lines.some((l) => l['level'] === 50 && /Redis Cluster is not supported/.test(String(l['msg'])))), 'a Cluster node is refused in the log')
  const ready = await refused.app.inject({ url: '/readyz' })
  t.equal(ready.statusCode, 503, '/readyz 503')
  t.match(ready.json().checks.redis, { ok: false, detail: /Redis Cluster is not supported/ }, 'with the reason')
})

t.test('Sentinel: the services find the master through redis+sentinel://', async (t) => {
  const master = await ownRedis(t, ['--save', '', '--appendonly', 'no'])
  const name = `mg${process.pid}`
  const sentinel = await ownRedis(t, [], {
    sentinelConf: (port, dir) => `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor ${name} 127.0.0.1 ${master.port} 1\n`
  })
  const url = `redis+sentinel://127.0.0.1:${sentinel.port}/${name}`
  const { app } = loggedApp()
  await app.register(redisPlugin, { url, keyPrefix: 'sen:' })
  await app.ready()
  t.teardown(() => app.close())
  t.ok(await until(async () => app.redis.status === 'ready'), 'connected through the Sentinel')
  await app.redis.set('probe', 'through-sentinel')
  t.equal(await client(t, master.url).get('sen:probe'), 'through-sentinel', 'the write landed on the master the Sentinel named')

  const bull = new Redis(bullConnection(url))
  t.teardown(() => { bull.disconnect() })
  t.equal(await bull.ping(), 'PONG', 'BullMQ\'s connection options reach it too')
  t.equal(await bull.get('sen:probe'), 'through-sentinel', 'on the same master')
})
