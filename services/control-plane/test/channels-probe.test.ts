import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { configChannel, type ConfigChange } from '@modelgate/contracts'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { TEST_ALL_LOCK_KEY } from '../src/services/channels/index.js'
import { freePort, httpTestProxy, socksTestProxy } from '@modelgate/testing'
import { build, login, ROOT, sharedEnv } from './helpers.js'

const MiB = 1024 * 1024

interface Seen { mode: string, path: string, model?: string, auth?: string }

/**
 * A real OpenAI-speaking upstream on 127.0.0.1. The first path segment picks the behaviour:
 * `ok`, `badkey` (401), `slow-<ms>`, `bigtest` (a 2 MiB chat answer), `huge` (a 10 MiB model
 * list, streamed with back-pressure) and `hugecl` (the same, announced by content-length).
 */
async function upstream (t: Test) {
  const seen: Seen[] = []
  const huge: Array<{ sent: number, finished: boolean }> = []
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
  const stream10MiB = (res: ServerResponse, contentLength: boolean) => {
    const total = 10 * MiB
    const head = '{"object":"list","data":[{"id":"'
    const tail = '"}]}'
    res.writeHead(200, { 'content-type': 'application/json', ...(contentLength ? { 'content-length': String(total + head.length + tail.length) } : {}) })
    const chunk = Buffer.alloc(64 * 1024, 'a')
    const state = { sent: 0, finished: false }
    huge.push(state)
    res.write(head)
    const pump = () => {
      while (state.sent < total) {
        state.sent += chunk.length
        if (!res.write(chunk)) {
          res.once('drain', pump)
          return
        }
      }
      res.end(tail, () => { state.finished = true })
    }
    res.on('close', () => res.removeAllListeners('drain'))
    pump()
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const [, mode = '', ...rest] = (req.url ?? '').split('/')
      const path = `/${rest.join('/')}`
      const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string } : undefined
      seen.push({ mode, path, model: body?.model, auth: req.headers.authorization })
      const completion = () => json(res, 200, {
        id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: body?.model ?? '',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
      })
      if (mode === 'badkey') {
        json(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } })
      } else if (mode === 'huge' || mode === 'hugecl') {
        stream10MiB(res, mode === 'hugecl')
      } else if (mode === 'bigtest') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(`{"id":"x","object":"chat.completion","pad":"${'p'.repeat(2 * MiB)}"}`)
      } else if (path === '/v1/models') {
        json(res, 200, { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }, { id: 'o3', object: 'model' }] })
      } else if (mode.startsWith('slow-')) {
        setTimeout(completion, Number(mode.slice(5)))
      } else {
        completion()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, huge }
}

async function setup (t: Test, env?: Record<string, string>) {
  const shared = env ?? await sharedEnv(t)
  const app = await build(t, {}, shared)
  const root = await login(app, ROOT.username, ROOT.password)
  const headers = { ...root.headers, 'accept-language': 'en' }
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
    (await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })).json()
  const create = async (fields: Record<string, unknown>): Promise<{ id: number }> => {
    const res = await call('POST', '/api/channel/', { name: 'ch', type: 1, key: 'sk-upstream', models: 'gpt-4o-mini', ...fields })
    if (res.success !== true) throw new Error(`create failed: ${res.message}`)
    return res.data[0]
  }
  const row = async (id: number) => await app.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  return { app, env: shared, call, create, row }
}

const systemLogs = async (app: FastifyInstance, channelId: number) =>
  await app.db.selectFrom('logs').select(['type', 'content']).where('channel_id', '=', channelId).execute()

t.test('testing one channel records its response time and test time; time is answered in seconds', async (t) => {
  const up = await upstream(t)
  const { call, create, row } = await setup(t)
  // One key: a channel with several tests each of them (test/channel-keys.test.ts).
  const c = await create({ base_url: `${up.base}/slow-300`, models: 'gpt-4o-mini,gpt-4o', key: 'sk-first' })
  const before = Math.floor(Date.now() / 1000)
  const res = await call('GET', `/api/channel/test/${c.id}`)
  t.match(res, { success: true, message: /^Channel ch passed the test with gpt-4o-mini in 0\.\d\d s$/ })
  t.same(Object.keys(res).sort(), ['message', 'success', 'time'], '`time` sits beside success and message')
  t.ok(res.time >= 0.3 && res.time < 5, `time is in seconds (${res.time})`)
  const after = await row(c.id)
  t.ok(after.response_time >= 300 && Math.abs(after.response_time - res.time * 1000) < 2, 'response_time is the same duration in ms')
  t.ok(after.test_time >= before && after.test_time <= Math.floor(Date.now() / 1000) + 1, 'test_time is now')
  t.match(up.seen.at(-1), { path: '/v1/chat/completions', model: 'gpt-4o-mini', auth: 'Bearer sk-first' }, 'the first model, through the adaptor, with the key')

  const picked = await create({ base_url: `${up.base}/ok`, models: 'a,b', test_model: 'b', model_mapping: '{"o3":"o3-2025-04-16"}' })
  await call('GET', `/api/channel/test/${picked.id}`)
  t.equal(up.seen.at(-1)?.model, 'b', 'the test model before the first model')
  const asked = await call('GET', `/api/channel/test/${picked.id}?model=o3`)
  t.match(asked, { success: true, message: /with o3 in/ })
  t.equal(up.seen.at(-1)?.model, 'o3-2025-04-16', '?model wins, sent through the model mapping')

  const suno = await create({ type: 36, models: 'chirp-v4' })
  t.same(await call('GET', `/api/channel/test/${suno.id}`), { success: false, message: 'Channel type 36 cannot be tested or list its models yet', time: 0 })
  t.same(await call('GET', '/api/channel/test/9999'), { success: false, message: 'Channel not found, refresh and retry', time: 0 })
  const big = await create({ base_url: `${up.base}/bigtest` })
  t.match(await call('GET', `/api/channel/test/${big.id}`), { success: false, message: /the upstream answer exceeds 1 MiB/ }, 'test answers are bounded too')
})

t.test('a failing or slow channel is auto-disabled with a reason when the rules allow, and re-enabled when it passes', async (t) => {
  const up = await upstream(t)
  const { app, env, call, create, row } = await setup(t)
  const sub = new Redis(env.REDIS_URL!)
  t.teardown(() => { sub.disconnect() })
  const heard: ConfigChange[] = []
  sub.on('message', (_c: string, text: string) => heard.push(JSON.parse(text) as ConfigChange))
  await sub.subscribe(configChannel(env.REDIS_KEY_PREFIX!))

  // Announcements of earlier changes may still be on their way: let them land, then listen.
  const quiet = async () => {
    await new Promise((resolve) => setTimeout(resolve, 100))
    heard.length = 0
  }
  const broken = await create({ name: 'broken', base_url: `${up.base}/badkey` })
  const noBan = await create({ name: 'noban', base_url: `${up.base}/badkey`, auto_ban: 0 })
  await quiet()
  const res = await call('GET', `/api/channel/test/${broken.id}`)
  t.match(res, { success: false, message: 'Channel broken failed the test with gpt-4o-mini: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided. The channel has been auto-disabled.' })
  t.type(res.time, 'number')
  t.match(await row(broken.id), { status: 3, other_info: { status_reason: 'upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided', status_time: Number } })
  t.match(await systemLogs(app, broken.id), [{ type: 4, content: /auto-disabled: upstream answered HTTP 401 \(invalid_api_key\): Incorrect API key provided/ }], 'a system log says why')
  t.same(await app.db.selectFrom('abilities').select('enabled').where('channel_id', '=', broken.id).execute(), [{ enabled: false }])
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(heard, [{ kind: 'channel', id: broken.id }], 'the gateways are told')

  t.match(await call('GET', `/api/channel/test/${noBan.id}`), { success: false, message: 'Channel noban failed the test with gpt-4o-mini: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided' })
  t.equal((await row(noBan.id)).status, 1, 'auto_ban 0: stays enabled')
  t.same(await systemLogs(app, noBan.id), [])

  await app.saveOptions({ AutomaticDisableChannelEnabled: 'false' })
  const off = await create({ name: 'off', base_url: `${up.base}/badkey` })
  await call('GET', `/api/channel/test/${off.id}`)
  t.equal((await row(off.id)).status, 1, 'automatic disabling switched off: stays enabled')

  await app.saveOptions({ AutomaticDisableChannelEnabled: 'true', ChannelDisableThreshold: '0.2' })
  const slow = await create({ name: 'slow', base_url: `${up.base}/slow-500` })
  t.match(await call('GET', `/api/channel/test/${slow.id}`), { success: false, message: /response time \d+ ms exceeds 200 ms\. The channel has been auto-disabled/ })
  t.match(await row(slow.id), { status: 3, other_info: { status_reason: /exceeds 200 ms/ } })
  t.ok((await row(slow.id)).response_time >= 500)
  await app.saveOptions({ ChannelDisableThreshold: '0' })
  const slowNoLimit = await create({ name: 'slow2', base_url: `${up.base}/slow-300` })
  t.match(await call('GET', `/api/channel/test/${slowNoLimit.id}`), { success: true }, 'a threshold of 0 means no limit')

  // Recovery: the upstream works again.
  await app.db.updateTable('channels').set({ base_url: `${up.base}/ok` }).where('id', '=', broken.id).execute()
  t.match(await call('GET', `/api/channel/test/${broken.id}`), { success: true, message: /passed/ })
  t.equal((await row(broken.id)).status, 3, 'automatic enabling is off by default')
  await app.saveOptions({ AutomaticEnableChannelEnabled: 'true' })
  await quiet()
  t.match(await call('GET', `/api/channel/test/${broken.id}`), { success: true, message: /and has been re-enabled$/ })
  t.match(await row(broken.id), { status: 1, other_info: { status_reason: 'passed a channel test' } })
  t.same(await app.db.selectFrom('abilities').select('enabled').where('channel_id', '=', broken.id).execute(), [{ enabled: true }])
  t.equal((await systemLogs(app, broken.id)).length, 2)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(heard, [{ kind: 'channel', id: broken.id }])

  const manual = await create({ name: 'manual', base_url: `${up.base}/ok` })
  await call('PUT', '/api/channel/', { id: manual.id, status: 2 })
  t.match(await call('GET', `/api/channel/test/${manual.id}`), { success: true })
  t.match(await row(manual.id), { status: 2 }, 'an admin\'s disable is never undone by a test')
  t.ok((await row(manual.id)).test_time > 0)
})

t.test('testing all channels runs in the background, once at a time across replicas', async (t) => {
  const up = await upstream(t)
  const env = await sharedEnv(t)
  const { app, call, create, row } = await setup(t, env)
  const replica = await setup(t, env)
  const slow = await Promise.all([1, 2, 3, 4, 5].map(async (i) => await create({ name: `slow${i}`, base_url: `${up.base}/slow-600` })))
  const broken = await create({ name: 'broken', base_url: `${up.base}/badkey` })
  const recovered = await create({ name: 'recovered', base_url: `${up.base}/ok` })
  const manual = await create({ name: 'manual', base_url: `${up.base}/ok` })
  await app.db.updateTable('channels').set({ status: 3 }).where('id', '=', recovered.id).execute()
  await call('PUT', '/api/channel/', { id: manual.id, status: 2 })
  await app.saveOptions({ AutomaticEnableChannelEnabled: 'true' })

  const started = Date.now()
  const racing = await Promise.all([call('GET', '/api/channel/test'), replica.call('GET', '/api/channel/test'), call('GET', '/api/channel/test')])
  t.ok(Date.now() - started < 500, 'it answers at once')
  t.same(racing.filter((r) => r.success === true), [{ success: true, message: 'Testing all channels in the background; refresh to see the results', data: null }], 'of simultaneous starts, one wins')
  t.same(await call('GET', '/api/channel/test'), { success: false, message: 'A channel test is already running, please try again later' })
  t.same(await replica.call('GET', '/api/channel/test'), { success: false, message: 'A channel test is already running, please try again later' }, 'another replica sees the run too')
  t.equal(await app.redis.pttl(TEST_ALL_LOCK_KEY) > 0, true, 'the lock expires by itself should the replica die')

  for (let i = 0; i < 200 && await app.redis.exists(TEST_ALL_LOCK_KEY) === 1; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(await app.redis.exists(TEST_ALL_LOCK_KEY), 0, 'the lock is released when the run ends')
  for (const c of slow) t.ok((await row(c.id)).response_time >= 600, `slow channel ${c.id} tested`)
  t.equal((await row(broken.id)).status, 3, 'a failing channel is auto-disabled')
  t.equal((await row(recovered.id)).status, 1, 'an auto-disabled one that passes is back')
  t.match(await row(manual.id), { status: 2, test_time: 0 }, 'channels an admin disabled are not tested')
  t.equal(up.seen.filter((s) => s.mode === 'ok').length, 1)

  t.match(await replica.call('GET', '/api/channel/test'), { success: true }, 'a new run may start afterwards, on any replica')
  for (let i = 0; i < 200 && await app.redis.exists(TEST_ALL_LOCK_KEY) === 1; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(up.seen.filter((s) => s.mode === 'ok').length, 2, 'the second run tested the recovered channel again')
})

t.test('closing the service ends a running test of all channels and releases its lock', async (t) => {
  const up = await upstream(t)
  const env = await sharedEnv(t)
  const { app, call, create } = await setup(t, env)
  for (let i = 0; i < 12; i++) await create({ name: `slow${i}`, base_url: `${up.base}/slow-400` })
  t.match(await call('GET', '/api/channel/test'), { success: true })
  await new Promise((resolve) => setTimeout(resolve, 100))
  await app.close()
  t.ok(up.seen.length < 12, `channels not started yet were left (${up.seen.length} tested)`)
  const redis = new Redis(env.REDIS_URL!, { keyPrefix: env.REDIS_KEY_PREFIX })
  t.teardown(() => { redis.disconnect() })
  t.equal(await redis.exists(TEST_ALL_LOCK_KEY), 0)
})

t.test('fetches model lists from the saved or unsaved upstream, bounded in size', async (t) => {
  const up = await upstream(t)
  const { call, create } = await setup(t)
  const c = await create({ base_url: `${up.base}/ok`, key: 'sk-saved\nsk-other' })
  t.same(await call('GET', `/api/channel/fetch_models/${c.id}`), { success: true, message: '', data: ['gpt-4o-mini', 'o3'] })
  t.match(up.seen.at(-1), { mode: 'ok', path: '/v1/models', auth: 'Bearer sk-saved' })
  t.same(await call('POST', '/api/channel/fetch_models', { type: 1, base_url: `${up.base}/ok/`, key: 'sk-unsaved' }), { success: true, message: '', data: ['gpt-4o-mini', 'o3'] })
  t.match(up.seen.at(-1), { path: '/v1/models', auth: 'Bearer sk-unsaved' })
  t.same(await call('POST', '/api/channel/fetch_models', { type: 1, base_url: `${up.base}/ok`, key: ' ' }), { success: false, message: 'Please fill in the key' })
  t.same(await call('POST', '/api/channel/fetch_models', { type: 999, key: 'k' }), { success: false, message: 'Unknown channel type 999' })
  t.same(await call('POST', '/api/channel/fetch_models', { type: 36, key: 'k' }), { success: false, message: 'Channel type 36 cannot be tested or list its models yet' })
  t.same(await call('POST', '/api/channel/fetch_models', { type: 1, key: 'k', base_url: 'file:///etc/passwd' }), { success: false, message: 'The base URL must be an http:// or https:// address' })
  t.same(await call('POST', '/api/channel/fetch_models', { type: 1, key: 'k', base_url: `${up.base}/badkey` }), { success: false, message: 'Failed to fetch the model list: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided' })
  const closed = await freePort()
  t.same(await call('POST', '/api/channel/fetch_models', { type: 1, key: 'k', base_url: `http://127.0.0.1:${closed}` }), { success: false, message: 'Failed to fetch the model list: request failed: fetch failed (ECONNREFUSED)' })
  t.same(await call('GET', '/api/channel/fetch_models/9999'), { success: false, message: 'Channel not found, refresh and retry' })

  for (const mode of ['huge', 'hugecl']) {
    const res = await call('POST', '/api/channel/fetch_models', { type: 1, key: 'k', base_url: `${up.base}/${mode}` })
    t.same(res, { success: false, message: 'Failed to fetch the model list: the upstream answer exceeds 4 MiB' }, `${mode}: refused`)
  }
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(up.huge.length, 2)
  for (const h of up.huge) t.notOk(h.finished, `the upstream was cut off after ${(h.sent / MiB).toFixed(1)} MiB, not read to the end`)
})

t.test("a channel's proxy carries its console test and model lists, saved or not", async (t) => {
  const up = await upstream(t)
  const proxy = await httpTestProxy(t, 'admin:pw')
  const socks = await socksTestProxy(t)
  const { call, create } = await setup(t)
  const c = await create({ base_url: `${up.base}/ok`, proxy_url: proxy.url })
  t.match(await call('GET', `/api/channel/test/${c.id}`), { success: true })
  t.same(await call('GET', `/api/channel/fetch_models/${c.id}`), { success: true, message: '', data: ['gpt-4o-mini', 'o3'] })
  t.same(proxy.targets.map((target) => new URL(target).pathname), ['/ok/v1/chat/completions', '/ok/v1/models'], 'the saved channel test and model list went through its proxy')
  t.same(await call('POST', '/api/channel/fetch_models', { type: 1, base_url: `${up.base}/ok`, key: 'k', proxy_url: ` ${socks.url} ` }), { success: true, message: '', data: ['gpt-4o-mini', 'o3'] })
  t.equal(socks.targets.length, 1, 'unsaved settings use the proxy given with them')
  t.same(await call('POST', '/api/channel/fetch_models', { type: 1, base_url: `${up.base}/ok`, key: 'k', proxy_url: 'ftp://127.0.0.1:21' }), { success: false, message: 'The proxy URL must be an http://, https://, socks5:// or socks5h:// address' })
  const seen = up.seen.length
  t.match(await call('POST', '/api/channel/fetch_models', { type: 1, base_url: `${up.base}/ok`, key: 'k', proxy_url: proxy.url.replace(':pw@', ':wrong@') }), { success: false, message: /^Failed to fetch the model list/ }, 'a proxy refusing the credentials is a failed fetch')
  t.equal(up.seen.length, seen, 'and nothing reached the upstream')
})
