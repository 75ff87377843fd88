import { ROLES } from '@modelgate/contracts'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ChannelView } from '@modelgate/contracts'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { build, login, ROOT, type Session, userSession } from './helpers.js'

/** Distinctive middles, so a hint (first 3 and last 4 characters) can never contain them. */
const KEY = 'sk-live-REVEALMIDDLE-a1b2c3d4e5-9876'
const MULTI = ['sk-multi-FIRSTMIDDLE-0001', 'sk-multi-SECONDMIDDLE-0002']
const SECRET_PARTS = ['REVEALMIDDLE', 'FIRSTMIDDLE', 'SECONDMIDDLE', KEY, ...MULTI]

/** A real OpenAI-speaking upstream on 127.0.0.1 recording the key of every request; it accepts any key. */
async function upstream (t: Test) {
  const keys: string[] = []
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      keys.push((req.headers.authorization ?? '').replace(/^Bearer /, ''))
      res.writeHead(200, { 'content-type': 'application/json' })
      if ((req.url ?? '').endsWith('/models')) {
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] }))
        return
      }
      res.end(JSON.stringify({
        id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
      }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, keys }
}

async function setup (t: Test) {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const rootHeaders = { ...root.headers, 'accept-language': 'en' }
  const send = async (headers: Record<string, string>, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => (await send(rootHeaders, method, url, payload)).json()
  const create = async (fields: Record<string, unknown>): Promise<ChannelView> => {
    const res = await call('POST', '/api/channel/', { name: 'ch', type: 1, key: KEY, models: 'gpt-4o-mini', ...fields })
    if (res.success !== true) throw new Error(`create failed: ${res.message}`)
    return res.data[0]
  }
  const storedKey = async (id: number) => app.secrets.open((await app.db.selectFrom('channels').select('key').where('id', '=', id).executeTakeFirstOrThrow()).key)
  return { app, root, rootHeaders, send, call, create, storedKey }
}

/** Verifies the session again with its password (POST /api/verify), as the console's dialog does. */
async function verify (app: FastifyInstance, s: Session, password: string): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/api/verify', headers: s.headers, payload: { method: 'password', value: password } })
  if (res.json().success !== true) throw new Error(`verification failed: ${res.json().message}`)
}

const revealsOf = async (app: FastifyInstance) => await app.db.selectFrom('audit_logs').selectAll().where('action', '=', 'channel.key.reveal').orderBy('id').execute()

t.test('SEC-09 channel keys are write-only: no channel answer, read or write, carries a key, only hints', async (t) => {
  const up = await upstream(t)
  const { app, call, create, rootHeaders, send } = await setup(t)
  const single = await create({ base_url: up.base, tag: 'blue' })
  const multi = await create({ name: 'multi', base_url: up.base, key: MULTI.join('\n'), tag: 'blue' })
  t.match(single, { key_count: 1, key_hint: 'sk-…9876' }, 'a created channel answers its hint')
  t.match(multi, { key_count: 2, key_hint: 'sk-…0001' }, 'a multi-key channel answers its first key\'s hint and the count')
  const admin = await userSession(app, 'ops', ROLES.admin)

  const answers: Array<[string, string]> = []
  const record = (what: string, body: string) => { answers.push([what, body]) }

  // Every GET route under /api/channel, as the service declares them, with each channel's id.
  const routes = app.routeAccess.filter((r) => r.method === 'GET' && r.url.startsWith('/api/channel'))
  t.ok(routes.length >= 10, `${routes.length} read routes found`)
  for (const route of routes) {
    for (const id of route.url.includes(':id') ? [single.id, multi.id] : [0]) {
      const url = route.url.replace(':id', String(id))
      for (const headers of [rootHeaders, { ...admin.headers, 'accept-language': 'en' }]) {
        const res = await send(headers, 'GET', url)
        record(`GET ${url}`, res.body)
      }
    }
  }
  // The list and the search in every mode, and a search by the whole key (which finds it, showing only the hint).
  for (const query of ['', '?tag_mode=true', '?id_sort=true', '?p=1&page_size=100']) record(`GET /api/channel/${query}`, (await send(rootHeaders, 'GET', `/api/channel/${query}`)).body)
  const byKey = await call('GET', `/api/channel/search?keyword=${encodeURIComponent(KEY)}`)
  t.same(byKey.data.items.map((c: ChannelView) => c.id), [single.id], 'a whole key finds its channel')
  record('search by key', JSON.stringify(byKey))
  for (const keyword of ['REVEALMIDDLE', KEY.slice(0, -1), 'sk-multi-FIRST']) {
    const part = await call('GET', `/api/channel/search?keyword=${encodeURIComponent(keyword)}`)
    t.same(part.data.items, [], `part of a key finds nothing (${keyword})`)
  }
  const tagged = await call('GET', '/api/channel/search?keyword=multi&tag_mode=true')
  record('search in tag mode', JSON.stringify(tagged))

  // Write answers that return channel rows.
  record('PUT /api/channel/ (form)', JSON.stringify(await call('PUT', '/api/channel/', { id: single.id, name: 'renamed', key: '' })))
  record('PUT /api/channel/ (inline)', JSON.stringify(await call('PUT', '/api/channel/', { id: single.id, priority: 3 })))
  record('PUT /api/channel/ (new key)', JSON.stringify(await call('PUT', '/api/channel/', { id: multi.id, key: MULTI.join('\n') })))
  record('PUT /api/channel/{id}/keys', JSON.stringify(await call('PUT', `/api/channel/${multi.id}/keys`, { index: 1, status: 2 })))
  record('PUT /api/channel/tag', JSON.stringify(await call('PUT', '/api/channel/tag', { tag: 'blue', priority: 2 })))
  const copied = await call('POST', `/api/channel/copy/${multi.id}`)
  record('POST /api/channel/copy/{id}', JSON.stringify(copied))

  t.ok(answers.length > 30, `${answers.length} answers read`)
  for (const [what, body] of answers) {
    const leaked = SECRET_PARTS.filter((part) => body.includes(part))
    t.same(leaked, [], `${what}: no key text`)
  }
  const detail = await call('GET', `/api/channel/${single.id}`)
  t.notOk('key' in detail.data, 'the detail has no key field')
  t.equal(detail.data.key_hint, 'sk-…9876')
})

t.test('revealing a key: root only, after a fresh verification, not cached, audited without the key', async (t) => {
  const { app, root, send, create } = await setup(t)
  const c = await create({ name: 'prod' })
  const admin = await userSession(app, 'ops', ROLES.admin)
  const user = await userSession(app, 'someone')

  const byAdmin = await send({ ...admin.headers, 'accept-language': 'en' }, 'POST', `/api/channel/${c.id}/key`)
  t.equal(byAdmin.statusCode, 403, 'an admin may not read a key')
  t.notOk(byAdmin.body.includes('REVEALMIDDLE'))
  t.equal((await send(user.headers, 'POST', `/api/channel/${c.id}/key`)).statusCode, 403, 'nor a user')
  t.equal((await app.inject({ method: 'POST', url: `/api/channel/${c.id}/key` })).statusCode, 401, 'nor anyone signed out')

  const unverified = await send({ ...root.headers, 'accept-language': 'en' }, 'POST', `/api/channel/${c.id}/key`)
  t.equal(unverified.statusCode, 403, 'root without a fresh verification is refused')
  t.match(unverified.json(), { success: false, data: { require_verification: true } }, 'with the flag the console opens its verification dialog on')
  t.notOk(unverified.body.includes('REVEALMIDDLE'))
  t.same(await revealsOf(app), [], 'nothing revealed, nothing audited')

  await verify(app, root, ROOT.password)
  const shown = await send({ ...root.headers, 'accept-language': 'en' }, 'POST', `/api/channel/${c.id}/key`)
  t.equal(shown.statusCode, 200)
  t.same(shown.json(), { success: true, message: '', data: { key: KEY } }, 'root reads the key after verifying')
  t.equal(shown.headers['cache-control'], 'no-store', 'and no cache keeps it')

  const audit = await revealsOf(app)
  t.equal(audit.length, 1, 'one audit entry')
  t.match(audit[0], { actor_id: root.user.id, actor_name: 'root', action: 'channel.key.reveal', target_type: 'channel', target_id: String(c.id), note: 'prod' })
  t.notOk(SECRET_PARTS.some((part) => JSON.stringify(audit[0]).includes(part)), 'the entry holds no part of the key')

  const missing = await send({ ...root.headers, 'accept-language': 'en' }, 'POST', '/api/channel/424242/key')
  t.same(missing.json(), { success: false, message: 'Channel not found, refresh and retry' })
  t.equal((await revealsOf(app)).length, 1, 'a missing channel reveals and audits nothing')
})

t.test('reveals are limited to 5 a minute per user, with Retry-After', async (t) => {
  const { app, root, create } = await setup(t)
  const c = await create({})
  for (let i = 0; i < 6; i++) {
    const unverified = await app.inject({ method: 'POST', url: `/api/channel/${c.id}/key`, headers: root.headers })
    t.equal(unverified.statusCode, 403, 'refused for want of verification')
  }
  t.pass('those refusals (which the console repeats after its dialog) are not counted')
  await verify(app, root, ROOT.password)
  const codes: number[] = []
  let last
  for (let i = 0; i < 6; i++) {
    last = await app.inject({ method: 'POST', url: `/api/channel/${c.id}/key`, headers: { ...root.headers, 'accept-language': 'en' } })
    codes.push(last.statusCode)
  }
  t.same(codes, [200, 200, 200, 200, 200, 429], 'the sixth in a minute is refused')
  t.ok(Number(last!.headers['retry-after']) > 0, 'with Retry-After')
  t.match(last!.json(), { success: false })
  t.notOk(last!.body.includes('REVEALMIDDLE'))
  t.equal((await revealsOf(app)).length, 5, 'only the reveals that happened are audited')

  // Counted per user: another root session of the same user shares the limit.
  const again = await login(app, ROOT.username, ROOT.password)
  await verify(app, again, ROOT.password)
  t.equal((await app.inject({ method: 'POST', url: `/api/channel/${c.id}/key`, headers: again.headers })).statusCode, 429, 'a second sign-in shares the count')
})

t.test('an edit leaving the key blank keeps it; a new key replaces it and is the one sent upstream', async (t) => {
  const up = await upstream(t)
  const { call, create, storedKey } = await setup(t)
  const c = await create({ base_url: up.base })

  const edited = await call('PUT', '/api/channel/', { id: c.id, name: 'renamed', key: '', models: 'gpt-4o-mini', base_url: up.base, type: 1 })
  t.match(edited, { success: true, data: { name: 'renamed', key_hint: 'sk-…9876', key_count: 1 } })
  t.equal(await storedKey(c.id), KEY, 'a blank key keeps the stored one')
  t.equal((await call('PUT', '/api/channel/', { id: c.id, tag: 'x' })).success, true)
  t.equal(await storedKey(c.id), KEY, 'so does an absent one')

  await call('GET', `/api/channel/test/${c.id}`)
  t.equal(up.keys.at(-1), KEY, 'the stored key is what the channel sends')

  const replaced = await call('PUT', '/api/channel/', { id: c.id, key: 'sk-brand-NEWKEY-5555' })
  t.match(replaced.data, { key_hint: 'sk-…5555', key_count: 1 })
  t.equal(await storedKey(c.id), 'sk-brand-NEWKEY-5555', 'a new key replaces the old')
  await call('GET', `/api/channel/test/${c.id}`)
  t.equal(up.keys.at(-1), 'sk-brand-NEWKEY-5555', 'and the channel sends the new one')

  const multi = await create({ name: 'multi', base_url: up.base, key: MULTI.join('\n') })
  await call('PUT', `/api/channel/${multi.id}/keys`, { index: 1, status: 2 })
  const kept = await call('PUT', '/api/channel/', { id: multi.id, name: 'multi2', key: '  \n ' })
  t.match(kept.data, { key_count: 2, key_hint: 'sk-…0001' })
  t.equal(Object.keys(kept.data.key_states).length, 1, 'a blank key keeps a multi-key channel\'s keys and their states')
  t.equal(await storedKey(multi.id), MULTI.join('\n'))
})

t.test('changing where the key goes needs the key again; a copy keeps the key unread', async (t) => {
  const up = await upstream(t)
  const other = await upstream(t)
  const { call, create, storedKey } = await setup(t)
  const c = await create({ base_url: up.base })
  const message = 'Changing the type, base URL or proxy sends the key somewhere else: enter the key again'
  t.same(await call('PUT', '/api/channel/', { id: c.id, base_url: other.base }), { success: false, message }, 'a new base URL without the key is refused')
  t.same(await call('PUT', '/api/channel/', { id: c.id, base_url: other.base, key: ' ' }), { success: false, message })
  t.same(await call('PUT', '/api/channel/', { id: c.id, proxy_url: 'http://127.0.0.1:3128' }), { success: false, message }, 'so is a new proxy')
  t.same(await call('PUT', '/api/channel/', { id: c.id, type: 8 }), { success: false, message }, 'and a new type')
  t.equal((await call('PUT', '/api/channel/', { id: c.id, base_url: `${up.base}/`, name: 'same place' })).success, true, 'the same address written differently is no change')
  t.equal((await call('PUT', '/api/channel/', { id: c.id, base_url: other.base, key: 'sk-for-the-other-4444' })).success, true, 'with the key it is saved')
  await call('GET', `/api/channel/test/${c.id}`)
  t.same(other.keys, ['sk-for-the-other-4444'], 'the new address only ever got the key typed for it')
  t.notOk(up.keys.includes('sk-for-the-other-4444'))

  const copy = await call('POST', `/api/channel/copy/${c.id}?suffix=${encodeURIComponent(' (2)')}`)
  t.match(copy, { success: true, data: { name: 'same place (2)', base_url: other.base, key_hint: 'sk-…4444', status: 1, used_quota: 0 } })
  t.not(copy.data.id, c.id)
  t.equal(await storedKey(copy.data.id), 'sk-for-the-other-4444', 'the copy holds the same key')
  t.equal((await call('POST', `/api/channel/copy/${c.id}`)).data.name, 'same place copy', 'the default suffix')
  t.same(await call('POST', '/api/channel/copy/424242'), { success: false, message: 'Channel not found, refresh and retry' })
})
