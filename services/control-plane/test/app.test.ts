import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { verify } from '@node-rs/argon2'
import { loadControlPlaneConfig } from '@modelgate/config'
import { upsertOption } from '@modelgate/db'
import { createServiceEnv } from '@modelgate/testing'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import controlPlane from '../src/app.js'

async function build (t: Test, env: Record<string, string>) {
  const app = Fastify()
  await app.register(controlPlane, { config: loadControlPlaneConfig(env) })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

t.test('status answers with the defaults of a fresh install', async (t) => {
  const app = await build(t, await createServiceEnv(t))
  const res = await app.inject('/api/status')
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.success, true)
  t.match(body.data, {
    system_name: 'ModelGate',
    quota_per_unit: 500000,
    display_in_currency: true,
    min_topup: 1,
    price: 7.3,
    enable_online_topup: false,
    github_oauth: false,
    turnstile_check: false,
    chats: [],
    version: '0.1.0'
  })
})

t.test('status reflects options the super admin stored', async (t) => {
  const app = await build(t, await createServiceEnv(t))
  await upsertOption(app.db, 'SystemName', 'Acme AI')
  await upsertOption(app.db, 'MinTopUp', '5')
  await upsertOption(app.db, 'PayAddress', 'https://pay.example.com')
  await upsertOption(app.db, 'EpayId', '1001')
  await upsertOption(app.db, 'EpayKey', 'k')
  await upsertOption(app.db, 'Chats', 'not json')
  t.equal((await app.inject('/api/status')).json().data.enable_online_topup, false, 'not without the server address the callbacks are built from')
  await upsertOption(app.db, 'ServerAddress', 'https://gw.example.com')
  await app.saveOptions({})
  const { data } = (await app.inject('/api/status')).json()
  t.equal(data.system_name, 'Acme AI')
  t.equal(data.min_topup, 5)
  t.equal(data.enable_online_topup, true, 'online top-up is on once payment is configured')
  t.same(data.chats, [], 'a malformed stored value falls back to the default')
})

t.test('first start creates the root account once', async (t) => {
  const env = await createServiceEnv(t)
  const app = await build(t, env)
  const users = await app.db.selectFrom('users').select(['username', 'role', 'status', 'password_hash']).execute()
  t.equal(users.length, 1)
  t.match(users[0], { username: 'root', role: 100, status: 1 })
  t.ok(await verify(users[0]!.password_hash, '123456'), 'password 123456, stored as an argon2 hash')
  t.notMatch(users[0]!.password_hash, '123456')

  const again = await build(t, env)
  const count = await again.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  t.equal(Number(count.n), 1, 'a second start creates nobody')
})

t.test('health and readiness', async (t) => {
  const app = await build(t, await createServiceEnv(t))
  t.same((await app.inject('/healthz')).json(), { status: 'ok' })
  const ready = await app.inject('/readyz')
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { ready: true, checks: { postgres: { ok: true }, redis: { ok: true }, migrations: { ok: true } } })
})

t.test('readiness fails while Redis is unreachable', async (t) => {
  const env = await createServiceEnv(t, { REDIS_URL: 'redis://127.0.0.1:1' })
  const app = await build(t, env)
  const res = await app.inject('/readyz')
  t.equal(res.statusCode, 503)
  const body = res.json()
  t.equal(body.ready, false)
  t.equal(body.checks.redis.ok, false)
  t.equal(body.checks.postgres.ok, true)
})

t.test('unknown API paths answer in the envelope, in the caller\'s language', async (t) => {
  const app = await build(t, await createServiceEnv(t))
  const zh = await app.inject('/api/nothing-here')
  t.equal(zh.statusCode, 404)
  t.same(zh.json(), { success: false, message: '未找到' }, 'Chinese when the language is unknown')
  const en = await app.inject({ url: '/api/nothing-here', headers: { 'accept-language': 'en-US,en;q=0.9,zh;q=0.5' } })
  t.same(en.json(), { success: false, message: 'Not found' })
  const zhFirst = await app.inject({ url: '/api/nothing-here', headers: { 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' } })
  t.equal(zhFirst.json().message, '未找到')
})

t.test('serves the console and falls back to it for client-side routes', async (t) => {
  const dist = await mkdtemp(join(tmpdir(), 'mg-web-'))
  t.teardown(() => rm(dist, { recursive: true, force: true }))
  await writeFile(join(dist, 'index.html'), '<!doctype html><div id="root"></div>')
  await writeFile(join(dist, 'app.js'), 'console.log(1)')
  const app = await build(t, await createServiceEnv(t, { WEB_DIST_DIR: dist }))
  for (const path of ['/', '/token', '/channel/edit/3', '/login?expired=true']) {
    const res = await app.inject(path)
    t.equal(res.statusCode, 200, path)
    t.match(res.body, '<div id="root">', path)
  }
  t.equal((await app.inject('/app.js')).body, 'console.log(1)')
  t.equal((await app.inject({ method: 'POST', url: '/token' })).statusCode, 404, 'only GET falls back to the console')
})
