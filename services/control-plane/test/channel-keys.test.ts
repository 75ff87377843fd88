import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type ChannelView, configChannel, type ConfigChange, ROLES } from '@modelgate/contracts'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { TEST_ALL_LOCK_KEY } from '../src/services/channels/index.js'
import { build, login, ROOT, sharedEnv, userSession } from './helpers.js'

interface Seen { path: string, key: string, headers: IncomingHttpHeaders, body: Record<string, unknown> }

/**
 * A real OpenAI-speaking upstream on 127.0.0.1 that accepts only the keys in `good` (401 with
 * OpenAI's error for any other). Under `/down` it answers 500 whatever the key.
 */
async function upstream (t: Test, good: Iterable<string>) {
  const accepted = new Set(good)
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const key = (req.headers.authorization ?? '').replace(/^Bearer /, '')
      const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> : {}
      seen.push({ path: req.url ?? '', key, headers: req.headers, body })
      const json = (status: number, answer: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(answer))
      }
      if ((req.url ?? '').startsWith('/down/')) {
        json(500, { error: { message: 'The server had an error while processing your request', type: 'server_error', code: null } })
      } else if (!accepted.has(key)) {
        json(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } })
      } else {
        json(200, {
          id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: String(body.model ?? ''),
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
        })
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, accepted }
}

const fingerprint = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 16)

const ALIVE_1 = 'sk-alive-one-1111'
const DEAD = 'sk-dead-two-2222'
const ALIVE_3 = 'sk-alive-three-3333'

async function setup (t: Test) {
  const env = await sharedEnv(t)
  const app = await build(t, {}, env)
  const root = await login(app, ROOT.username, ROOT.password)
  const headers = { ...root.headers, 'accept-language': 'en' }
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
    (await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })).json()
  const create = async (fields: Record<string, unknown>): Promise<ChannelView> => {
    const res = await call('POST', '/api/channel/', { name: 'ch', type: 1, key: [ALIVE_1, DEAD, ALIVE_3].join('\n'), models: 'gpt-4o-mini', ...fields })
    if (res.success !== true) throw new Error(`create failed: ${res.message}`)
    return res.data[0]
  }
  const row = async (id: number) => await app.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  const keys = async (id: number) => (await call('GET', `/api/channel/${id}/keys`)).data as Array<{ index: number, status: number, reason: string, last_error: string, time: number, last_error_time: number }>
  return { app, env, call, create, row, keys }
}

t.test('lists a channel\'s keys masked, in key order, with their states and counts them in views', async (t) => {
  const up = await upstream(t, [ALIVE_1, ALIVE_3])
  const { app, call, create } = await setup(t)
  const c = await create({ base_url: up.base })
  t.equal(c.key_count, 3, 'the created view counts the keys')
  const res = await call('GET', `/api/channel/${c.id}/keys`)
  t.same(res, {
    success: true,
    message: '',
    data: [
      { index: 0, fingerprint: fingerprint(ALIVE_1), hint: 'sk-…1111', status: 1, reason: '', time: 0, last_error: '', last_error_time: 0 },
      { index: 1, fingerprint: fingerprint(DEAD), hint: 'sk-…2222', status: 1, reason: '', time: 0, last_error: '', last_error_time: 0 },
      { index: 2, fingerprint: fingerprint(ALIVE_3), hint: 'sk-…3333', status: 1, reason: '', time: 0, last_error: '', last_error_time: 0 }
    ]
  })
  t.notOk(JSON.stringify(res).includes('alive-one'), 'no key is shown whole')

  const single = await create({ name: 'single', key: 'sk-only-one-key-9999' })
  const json = await create({ name: 'json', key: '{"type": "service_account",\n "private_key": "line1\\nline2"}' })
  t.equal(single.key_count, 1)
  t.equal(json.key_count, 1, 'a JSON credential is one key, newlines and all')
  t.equal((await call('GET', `/api/channel/${json.id}/keys`)).data.length, 1)
  const list = await call('GET', '/api/channel/?p=1&page_size=10')
  t.same(list.data.items.map((i: { name: string, key_count: number }) => [i.name, i.key_count]), [['json', 1], ['single', 1], ['ch', 3]], 'the list counts each channel\'s keys')
  await call('PUT', '/api/channel/', { id: single.id, tag: 'grp' })
  await call('PUT', '/api/channel/', { id: c.id, tag: 'grp' })
  const tagged = await call('GET', '/api/channel/?p=1&page_size=10&tag_mode=true')
  const tag = tagged.data.items.find((i: { tag?: string }) => i.tag === 'grp')
  t.same(tag.children.map((i: { name: string, key_count: number }) => [i.name, i.key_count]), [['single', 1], ['ch', 3]], 'tag mode counts them too')
  t.equal((await call('GET', `/api/channel/${c.id}`)).data.key_count, 3)
  t.equal((await call('PUT', '/api/channel/', { id: c.id, priority: 5 })).data.key_count, 3, 'an inline edit answers the count')

  t.same(await call('GET', '/api/channel/9999/keys'), { success: false, message: 'Channel not found, refresh and retry' })
  const user = await userSession(app, 'bob', ROLES.common)
  t.equal((await app.inject({ method: 'GET', url: `/api/channel/${c.id}/keys`, headers: user.headers })).statusCode, 403, 'admins only')
  t.equal((await app.inject({ method: 'PUT', url: `/api/channel/${c.id}/keys`, headers: user.headers, payload: { index: 0, status: 2 } })).statusCode, 403)
})

t.test('an admin disables and enables one key by index or fingerprint; the channel status stays', async (t) => {
  const up = await upstream(t, [ALIVE_1, ALIVE_3])
  const { env, call, create, row, keys } = await setup(t)
  const c = await create({ base_url: up.base })
  const sub = new Redis(env.REDIS_URL!)
  t.teardown(() => { sub.disconnect() })
  const heard: ConfigChange[] = []
  sub.on('message', (_c: string, text: string) => heard.push(JSON.parse(text) as ConfigChange))
  await sub.subscribe(configChannel(env.REDIS_KEY_PREFIX!))
  await new Promise((resolve) => setTimeout(resolve, 100))
  heard.length = 0

  const off = await call('PUT', `/api/channel/${c.id}/keys`, { index: 1, status: 2 })
  t.match(off, { success: true, message: 'Key 2 disabled' })
  t.same(off.data.map((k: { status: number }) => k.status), [1, 2, 1], 'the answer lists the keys after the change')
  t.match(off.data[1], { reason: 'disabled by admin root', time: Number })
  t.match((await row(c.id)).key_states, { [fingerprint(DEAD)]: { status: 2, reason: 'disabled by admin root' } })
  t.equal((await row(c.id)).status, 1, 'the channel stays enabled')
  for (let i = 0; i < 40 && heard.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25))
  t.same(heard, [{ kind: 'channel', id: c.id }], 'the gateways are told')

  const on = await call('PUT', `/api/channel/${c.id}/keys`, { fingerprint: fingerprint(DEAD), status: 1 })
  t.match(on, { success: true, message: 'Key 2 enabled' })
  t.same((await keys(c.id)).map((k) => k.status), [1, 1, 1])
  t.match((await keys(c.id))[1], { reason: 'enabled by admin root' })

  t.same(await call('PUT', `/api/channel/${c.id}/keys`, { index: 0, status: 3 }), { success: false, message: 'A key\'s status can only be set to 1 (enabled) or 2 (disabled)' })
  t.same(await call('PUT', `/api/channel/${c.id}/keys`, { index: 3, status: 2 }), { success: false, message: 'The channel has no such key; refresh and retry' })
  t.same(await call('PUT', `/api/channel/${c.id}/keys`, { fingerprint: '0123456789abcdef', status: 2 }), { success: false, message: 'The channel has no such key; refresh and retry' })
  t.same(await call('PUT', `/api/channel/${c.id}/keys`, { status: 2 }), { success: false, message: 'The channel has no such key; refresh and retry' })
  const single = await create({ name: 'single', key: 'sk-only-one-key-9999' })
  t.same(await call('PUT', `/api/channel/${single.id}/keys`, { index: 0, status: 2 }), { success: false, message: 'This channel has a single key; enable or disable the channel instead' })
})

t.test('testing a multi-key channel auto-disables only the dead key and keeps the channel enabled', async (t) => {
  const up = await upstream(t, [ALIVE_1, ALIVE_3])
  const { app, call, create, row, keys } = await setup(t)
  const c = await create({ base_url: up.base })
  const res = await call('GET', `/api/channel/test/${c.id}`)
  t.match(res, { success: true, message: 'Channel ch tested with gpt-4o-mini: 2 of 3 keys passed. Key 2 failed: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided. Key 2 has been auto-disabled.' })
  t.ok(res.time > 0)
  t.same(up.seen.map((s) => s.key).sort(), [ALIVE_1, DEAD, ALIVE_3].sort(), 'every key was tried')
  const after = await keys(c.id)
  t.same(after.map((k) => k.status), [1, 3, 1])
  t.match(after[1], { reason: 'upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided', last_error: 'upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided' })
  t.ok(after[1]!.time > 0 && after[1]!.last_error_time > 0)
  t.match(await row(c.id), { status: 1 })
  t.ok((await row(c.id)).test_time > 0, 'the test time is recorded')
  t.same(await app.db.selectFrom('abilities').select('enabled').where('channel_id', '=', c.id).execute(), [{ enabled: true }])

  up.seen.length = 0
  t.match(await call('GET', `/api/channel/test/${c.id}`), { success: true, message: 'Channel ch tested with gpt-4o-mini: 2 of 3 keys passed. Key 2 failed: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided.' }, 'an auto-disabled key is tested again and stays disabled')
  t.equal(up.seen.length, 3)

  await call('PUT', `/api/channel/${c.id}/keys`, { index: 2, status: 2 })
  up.seen.length = 0
  t.match(await call('GET', `/api/channel/test/${c.id}`), { message: /2 keys passed|1 of 2 keys passed/ })
  t.same(up.seen.map((s) => s.key).sort(), [ALIVE_1, DEAD].sort(), 'a key an admin disabled is not tested')
  t.same((await keys(c.id)).map((k) => k.status), [1, 3, 2])
})

t.test('a chosen key is tested alone; a key an admin disabled is tested but left as it is', async (t) => {
  const up = await upstream(t, [ALIVE_1, ALIVE_3])
  const { call, create, row, keys } = await setup(t)
  const c = await create({ base_url: up.base })
  t.match(await call('GET', `/api/channel/test/${c.id}?key_index=0`), { success: true, message: /^Key 1 of channel ch passed the test with gpt-4o-mini in \d+\.\d\d s\.$/ })
  t.same(up.seen.map((s) => s.key), [ALIVE_1], 'only that key was sent')

  const dead = await call('GET', `/api/channel/test/${c.id}?key_index=1`)
  t.match(dead, { success: false, message: 'Key 2 of channel ch failed the test with gpt-4o-mini: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided. Key 2 has been auto-disabled.' })
  t.same(up.seen.map((s) => s.key), [ALIVE_1, DEAD])
  t.same((await keys(c.id)).map((k) => k.status), [1, 3, 1])
  t.equal((await row(c.id)).status, 1, 'other keys are enabled: the channel stays')

  t.same(await call('GET', `/api/channel/test/${c.id}?key_index=3`), { success: false, message: 'The channel has no key 4', time: 0 })
  t.equal(up.seen.length, 2, 'nothing is sent for a key that does not exist')

  await call('PUT', `/api/channel/${c.id}/keys`, { index: 2, status: 2 })
  t.match(await call('GET', `/api/channel/test/${c.id}?key_index=2`), { success: true, message: /^Key 3 of channel ch passed/ })
  t.same((await keys(c.id)).map((k) => k.status), [1, 3, 2], 'a passing key an admin disabled stays disabled')
  up.accepted.delete(ALIVE_3)
  t.match(await call('GET', `/api/channel/test/${c.id}?key_index=2`), { success: false, message: 'Key 3 of channel ch failed the test with gpt-4o-mini: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided.' })
  t.match((await keys(c.id))[2], { status: 2, reason: 'disabled by admin root', last_error: '' }, 'nor is its state touched when it fails')

  const single = await create({ name: 'single', key: ALIVE_1, base_url: up.base })
  t.match(await call('GET', `/api/channel/test/${single.id}?key_index=0`), { success: true, message: /^Channel single passed the test with gpt-4o-mini in/ }, 'a single-key channel answers as before')
  t.same(await call('GET', `/api/channel/test/${single.id}?key_index=1`), { success: false, message: 'The channel has no key 2', time: 0 })
  t.equal((await call('GET', `/api/channel/test/${single.id}?key_index=x`)).success, false, 'a key index must be a number')
})

t.test('all keys dead: the channel is auto-disabled; a key that recovers brings it back through the test of all channels', async (t) => {
  const up = await upstream(t, [])
  const { app, call, create, row, keys } = await setup(t)
  const c = await create({ name: 'dead', base_url: up.base, key: `${ALIVE_1}\n${DEAD}` })
  const res = await call('GET', `/api/channel/test/${c.id}`)
  t.match(res, {
    success: false,
    message: 'Channel dead tested with gpt-4o-mini: 0 of 2 keys passed. Key 1 failed: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided. Key 2 failed: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided. ' +
      'Key 1 has been auto-disabled. Key 2 has been auto-disabled. The channel has been auto-disabled.'
  })
  t.match(await row(c.id), { status: 3, other_info: { status_reason: 'every key failed the test: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided' } })
  t.same(await app.db.selectFrom('abilities').select('enabled').where('channel_id', '=', c.id).execute(), [{ enabled: false }], 'the routing index follows')
  t.same((await keys(c.id)).map((k) => k.status), [3, 3])

  up.accepted.add(ALIVE_1)
  t.match(await call('GET', `/api/channel/test/${c.id}`), { success: true, message: 'Channel dead tested with gpt-4o-mini: 1 of 2 keys passed. Key 2 failed: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided.' })
  t.equal((await row(c.id)).status, 3, 'automatic enabling is off by default: nothing comes back')
  t.same((await keys(c.id)).map((k) => k.status), [3, 3])

  await app.saveOptions({ AutomaticEnableChannelEnabled: 'true' })
  t.match(await call('GET', '/api/channel/test'), { success: true })
  for (let i = 0; i < 200 && await app.redis.exists(TEST_ALL_LOCK_KEY) === 1; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.match(await row(c.id), { status: 1, other_info: { status_reason: 'a key passed a channel test' } }, 'the test of all channels re-enabled it')
  t.same(await app.db.selectFrom('abilities').select('enabled').where('channel_id', '=', c.id).execute(), [{ enabled: true }])
  const after = await keys(c.id)
  t.same(after.map((k) => k.status), [1, 3], 'the key that passed is enabled again, the dead one stays off')
  t.match(after[0], { reason: 'passed a channel test', last_error: 'upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided' })
  const logs = await app.db.selectFrom('logs').select('content').where('channel_id', '=', c.id).orderBy('id').execute()
  t.match(logs, [{ content: /auto-disabled: every key failed/ }, { content: /re-enabled: a key passed/ }], 'system logs say why')
})

t.test('when every key fails for another reason the keys stay enabled and the channel is auto-disabled', async (t) => {
  const up = await upstream(t, [ALIVE_1, ALIVE_3])
  const { app, call, create, row, keys } = await setup(t)
  const c = await create({ name: 'down', base_url: `${up.base}/down` })
  t.match(await call('GET', `/api/channel/test/${c.id}`), { success: false, message: /0 of 3 keys passed.*The channel has been auto-disabled\.$/ })
  t.equal((await row(c.id)).status, 3)
  const after = await keys(c.id)
  t.same(after.map((k) => k.status), [1, 1, 1], 'a server error says nothing about the keys')
  t.ok(after.every((k) => /server had an error/.test(k.last_error) && k.last_error_time > 0), 'each key records the error')

  const noBan = await create({ name: 'noban', base_url: up.base, auto_ban: 0 })
  t.match(await call('GET', `/api/channel/test/${noBan.id}`), { success: true, message: 'Channel noban tested with gpt-4o-mini: 2 of 3 keys passed. Key 2 failed: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided.' })
  t.same((await keys(noBan.id)).map((k) => k.status), [1, 1, 1], 'auto_ban 0: no key is disabled')
  t.equal((await keys(noBan.id))[1]!.last_error, 'upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided', 'but the error is recorded')

  await app.saveOptions({ AutomaticDisableChannelEnabled: 'false' })
  const off = await create({ name: 'off', base_url: up.base, key: DEAD + '\nsk-dead-four-4444' })
  t.match(await call('GET', `/api/channel/test/${off.id}`), { success: false })
  t.same((await keys(off.id)).map((k) => k.status), [1, 1], 'automatic disabling switched off: keys stay enabled')
  t.equal((await row(off.id)).status, 1, 'and so does the channel')
})

t.test('changing the key list drops the states of removed keys only', async (t) => {
  const up = await upstream(t, [ALIVE_1, ALIVE_3])
  const { call, create, row, keys } = await setup(t)
  const c = await create({ base_url: up.base })
  await call('PUT', `/api/channel/${c.id}/keys`, { index: 0, status: 2 })
  await call('GET', `/api/channel/test/${c.id}?key_index=1`)
  t.same(Object.keys((await row(c.id)).key_states).sort(), [fingerprint(ALIVE_1), fingerprint(DEAD)].sort())

  const edited = await call('PUT', '/api/channel/', { id: c.id, name: 'renamed' })
  t.equal(Object.keys(edited.data.key_states).length, 2, 'an edit leaving the key blank keeps every state')
  const rekeyed = await call('PUT', '/api/channel/', { id: c.id, key: `sk-brand-new-5555\n${ALIVE_1}` })
  t.equal(rekeyed.success, true)
  t.same(Object.keys(rekeyed.data.key_states), [fingerprint(ALIVE_1)], 'the answer shows the states left')
  t.equal(rekeyed.data.key_count, 2)
  t.same(Object.keys((await row(c.id)).key_states), [fingerprint(ALIVE_1)])
  const after = await keys(c.id)
  t.same(after.map((k) => [k.index, k.status]), [[0, 1], [1, 2]], 'a kept key keeps its state at its new position')
})

t.test('validates and stores overrides, multi-key mode and max input tokens; tests send the overrides', async (t) => {
  const up = await upstream(t, [ALIVE_1, ALIVE_3])
  const { app, call, create, row } = await setup(t)
  const base = { name: 'ch', type: 1, key: ALIVE_1, models: 'gpt-4o-mini', base_url: up.base }
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ param_override: '{"temperature": ' }, 'The parameter override must be a valid JSON object, e.g. {"temperature": 0.3}'],
    [{ param_override: '[1, 2]' }, 'The parameter override must be a valid JSON object, e.g. {"temperature": 0.3}'],
    [{ param_override: '"text"' }, 'The parameter override must be a valid JSON object, e.g. {"temperature": 0.3}'],
    [{ header_override: '{"X-A": ' }, 'The header override must be a valid JSON object of header names to text values'],
    [{ header_override: 'null' }, 'The header override must be a valid JSON object of header names to text values'],
    [{ header_override: '{"X-A": 1}' }, 'The header override value of X-A must be text on one line'],
    [{ header_override: '{"X-A": "a\\r\\nX-B: b"}' }, 'The header override value of X-A must be text on one line'],
    [{ header_override: '{"bad name": "x"}' }, 'The header override has an invalid header name: bad name'],
    [{ header_override: '{"Content-Length": "1"}' }, 'The header Content-Length cannot be overridden'],
    [{ multi_key_mode: 'sticky' }, 'The multi-key mode must be random or polling']
  ]
  for (const [fields, message] of cases) {
    t.same(await call('POST', '/api/channel/', { ...base, ...fields }), { success: false, message }, JSON.stringify(fields))
  }
  const zh = await app.inject({ method: 'POST', url: '/api/channel/', headers: (await login(app, ROOT.username, ROOT.password)).headers, payload: { ...base, param_override: '{' } })
  t.same(zh.json(), { success: false, message: '参数覆盖必须是合法的 JSON 对象，例如 {"temperature": 0.3}' }, 'in Chinese too')
  for (const bad of [{ max_input_tokens: -1 }, { max_input_tokens: 1.5 }, { multi_key_mode: 5 }]) {
    t.equal((await app.inject({ method: 'POST', url: '/api/channel/', headers: (await login(app, ROOT.username, ROOT.password)).headers, payload: { ...base, ...bad } })).statusCode, 400, JSON.stringify(bad))
  }
  t.equal(await app.db.selectFrom('channels').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n)), 0, 'nothing refused was stored')

  const plain = await create({ ...base, name: 'plain' })
  t.match(plain, { param_override: '', header_override: '', multi_key_mode: 'random', max_input_tokens: 0 }, 'defaults')
  const c = await create({
    ...base,
    key: `${ALIVE_1}\n${ALIVE_3}`,
    param_override: '{"temperature": 0.3, "max_tokens": 7}',
    header_override: '{"X-Upstream-Key": "key={api_key}", "X-Team": "ops"}',
    multi_key_mode: 'polling',
    max_input_tokens: 4096
  })
  t.same(JSON.parse(c.param_override), { temperature: 0.3, max_tokens: 7 })
  t.same(JSON.parse(c.header_override), { 'X-Upstream-Key': 'key={api_key}', 'X-Team': 'ops' })
  t.match(c, { multi_key_mode: 'polling', max_input_tokens: 4096 })
  t.match((await call('GET', `/api/channel/${c.id}`)).data, { multi_key_mode: 'polling', max_input_tokens: 4096 }, 'read back')

  await call('GET', `/api/channel/test/${c.id}?key_index=1`)
  const sent = up.seen.at(-1)!
  t.match(sent.body, { temperature: 0.3, max_tokens: 7, model: 'gpt-4o-mini' }, 'the test body carries the parameter override')
  t.equal(sent.headers['x-upstream-key'], `key=${ALIVE_3}`, '{api_key} is the key tested')
  t.equal(sent.headers['x-team'], 'ops')

  const kept = await call('PUT', '/api/channel/', { id: c.id, name: 'renamed' })
  t.match(kept.data, { multi_key_mode: 'polling', max_input_tokens: 4096 }, 'an edit without them keeps them')
  t.not(kept.data.param_override, '')
  const cleared = await call('PUT', '/api/channel/', { id: c.id, param_override: '  ', header_override: '{}', multi_key_mode: 'random', max_input_tokens: 0 })
  t.match(cleared.data, { param_override: '', header_override: '', multi_key_mode: 'random', max_input_tokens: 0 }, 'blank or empty clears them')
  t.same(await call('PUT', '/api/channel/', { id: c.id, header_override: '{"Host": "x"}' }), { success: false, message: 'The header Host cannot be overridden' })
  t.equal((await row(c.id)).header_override, '', 'a refused edit changes nothing')
})
