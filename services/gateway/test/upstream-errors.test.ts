import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadControlPlaneConfig } from '@modelgate/config'
import controlPlane from '@modelgate/control-plane'
import type { UsageEvent } from '@modelgate/contracts'
import { fastifyOptions } from '@modelgate/service'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildGateway, reload, seedChannel, seedToken, setOptions, settle, usageEvents } from './fixtures.js'

/** What an internal admin page holds: none of it may reach a client, a self log, an admin log or a channel test. */
const SECRET = 'SECRET-ADMIN-PAGE hunter2-7f3a'
const PAGE = `<html><body><h1>Internal admin</h1><p>${SECRET}; database at 10.9.8.7:5432</p></body></html>`
/** Never in any answer or log: the page, the addresses and hosts, the upstream's key and its extra fields. */
const NEVER = [SECRET, 'hunter2', '10.9.8.7', '10.0.0.7', '10.1.2.3', 'internal.corp', 'internal.example', 'backend-7.internal', 'sk-live', 'internal_trace', '<html']

/**
 * One server standing for several channels, told apart by the first path segment of their base
 * URL: an internal HTML page answering 500 or 200, an OpenAI upstream refusing the channel's key
 * or the request (context length), and Anthropic and Gemini upstreams refusing the request;
 * their messages name hosts and addresses.
 */
async function upstreams (t: Test): Promise<string> {
  const json = (status: number, body: unknown) => [status, 'application/json', JSON.stringify(body)] as const
  const answers: Record<string, readonly [number, string, string]> = {
    page500: [500, 'text/html; charset=utf-8', PAGE],
    page200: [200, 'text/html; charset=utf-8', PAGE],
    key401: json(401, { error: { message: 'Incorrect API key provided: sk-live-abcdef1234567. Manage keys at https://keys.internal.example/admin', type: 'invalid_request_error', code: 'invalid_api_key' } }),
    ctx400: json(400, { error: { message: "This model's maximum context length is 128000 tokens; see http://10.0.0.7:8080/limits or api.internal.corp:8443", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded', internal_trace: SECRET } }),
    claude400: json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum (gateway 10.1.2.3)' } }),
    gemini400: json(400, { error: { code: 400, message: 'Request contains an invalid argument (backend backend-7.internal:9000).', status: 'INVALID_ARGUMENT' } })
  }
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const [status, type, body] = answers[(req.url ?? '').split('/')[1] ?? ''] ?? json(404, { error: { message: 'no such upstream' } })
      res.writeHead(status, { 'content-type': type }).end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A control plane on the gateway's database (its own app, called with inject: the proxy is not under test here). */
async function consoleOf (t: Test, env: Record<string, string>): Promise<FastifyInstance> {
  const cp = Fastify(fastifyOptions('control-plane', 'silent', { trustRequestId: true }))
  await cp.register(controlPlane, { config: loadControlPlaneConfig(env) })
  await cp.ready()
  t.teardown(() => cp.close())
  return cp
}

async function signIn (cp: FastifyInstance, username: string, password: string): Promise<Record<string, string>> {
  const res = await cp.inject({ method: 'POST', url: '/api/user/login', payload: { username, password } })
  const body = res.json() as { success: boolean, data: { id: number } }
  const cookie = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('session='))
  if (!body.success || cookie === undefined) throw new Error(`login as ${username} failed`)
  return { cookie: cookie.split(';')[0]!, 'new-api-user': String(body.data.id), 'accept-language': 'en' }
}

t.test('SEC-13 upstream failures: clients hear the upstream only about their request (cleaned); self logs never carry upstream bodies; admins see the cleaned classification; a channel on an internal page leaks nothing', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const cp = await consoleOf(t, env)
  const root = await signIn(cp, 'root', '123456')
  const created = await cp.inject({ method: 'POST', url: '/api/user/', headers: root, payload: { username: 'alice', password: 'password123' } })
  t.equal(created.json().success, true)
  const alice = await signIn(cp, 'alice', 'password123')
  await app.db.updateTable('users').set({ quota: 10_000_000 }).where('username', '=', 'alice').execute()
  const { key } = await seedToken(app.db, Number(alice['new-api-user']))
  const base = await upstreams(t)
  const models = ['m-page500', 'm-page200', 'm-key401', 'm-ctx400', 'claude-x', 'gemini-x']
  await setOptions(app.db, { ModelRatio: Object.fromEntries(models.map((m) => [m, 1])) })
  const channel = async (model: string, path: string, type = 1) => (await seedChannel(app.db, { type, baseUrl: `${base}/${path}`, models: [model], name: path, autoBan: false })).id
  const ids = {
    page500: await channel('m-page500', 'page500'),
    page200: await channel('m-page200', 'page200'),
    key401: await channel('m-key401', 'key401'),
    ctx400: await channel('m-ctx400', 'ctx400'),
    claude400: await channel('claude-x', 'claude400', 14),
    gemini400: await channel('gemini-x', 'gemini400', 24)
  }
  await reload(app)

  const said = new Map<string, { status: number, text: string }>()
  const ask = async (what: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
    const answer = { status: res.status, text: await res.text() }
    said.set(what, answer)
    for (const never of NEVER) t.notOk(answer.text.includes(never), `${what}: the client never reads "${never}"`)
    return { status: answer.status, json: JSON.parse(answer.text) as Record<string, unknown> }
  }
  const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] })
  const GENERIC = /^The upstream provider failed to answer \(request id: ([0-9a-f-]{36})\)$/

  // The channel's own failures: a generic message with the request id, never the upstream's words.
  for (const [what, status] of [['page500', 500], ['page200', 502], ['key401', 502]] as const) {
    const res = await ask(what, '/v1/chat/completions', chat(`m-${what}`))
    t.equal(res.status, status, `${what}: ${status}`)
    t.match(res.json, { error: { message: GENERIC, type: 'upstream_error', param: null, code: 'upstream_error' } }, `${what}: OpenAI's shape, a generic message`)
    t.notMatch(said.get(what)!.text, /Incorrect API key|invalid_api_key|non-JSON|text\/html/, `${what}: nothing of the classification`)
  }
  // About the request: the upstream's own error, its message cleaned and only its known fields.
  t.same(await ask('ctx400', '/v1/chat/completions', chat('m-ctx400')), {
    status: 400,
    json: { error: { message: "This model's maximum context length is 128000 tokens; see [redacted] or [redacted]", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } }
  }, 'a context-length refusal reaches the client, hosts and addresses redacted, in OpenAI\'s shape')
  t.same(await ask('claude400', '/v1/messages', { model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01' }), {
    status: 400,
    json: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum (gateway [redacted])' } }
  }, 'in Anthropic\'s shape on /v1/messages')
  t.same(await ask('gemini400', '/v1beta/models/gemini-x:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }), {
    status: 400,
    json: { error: { code: 400, message: 'Request contains an invalid argument (backend [redacted]).', status: 'INVALID_ARGUMENT' } }
  }, 'in Google\'s shape on a Gemini path')

  // The usage events: what the client was told, and the classification for admins only.
  const events = await usageEvents(app)
  t.equal(events.length, 6)
  const byChannel = (id: number): UsageEvent => events.find((e) => e.channel_id === id)!
  const bytes = Buffer.byteLength(PAGE)
  const expected: Record<keyof typeof ids, NonNullable<UsageEvent['error']>['upstream']> = {
    page500: { status: 500, message: `non-JSON answer (text/html, ${bytes} bytes)` },
    page200: { status: 200, code: 'non_json_answer', message: `non-JSON answer (text/html, ${bytes} bytes)` },
    key401: { status: 401, code: 'invalid_api_key', message: 'Incorrect API key provided: sk-***. Manage keys at [redacted]' },
    ctx400: { status: 400, code: 'context_length_exceeded', message: "This model's maximum context length is 128000 tokens; see [redacted] or [redacted]" },
    claude400: { status: 400, code: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum (gateway [redacted])' },
    gemini400: { status: 400, code: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument (backend [redacted]).' }
  }
  for (const [what, id] of Object.entries(ids) as Array<[keyof typeof ids, number]>) {
    const event = byChannel(id)
    t.same(event.error?.upstream, expected[what], `${what}: the event carries the cleaned classification for admins`)
    const told = JSON.parse(said.get(what)!.text) as { error: { message: string } }
    t.equal(event.error?.message, told.error.message, `${what}: and what the client was told`)
    const generic = GENERIC.exec(event.error?.message ?? '')
    if (what === 'page500' || what === 'page200' || what === 'key401') t.equal(generic?.[1], event.request_id, `${what}: the request id the client got is the log's`)
  }
  await settle(app, events)

  // Alice's own logs: what she was told, never the upstream's account of the channel's failure.
  const self = await cp.inject({ url: '/api/log/self/?p=1&page_size=100', headers: alice })
  const rows = (self.json() as { data: { items: Array<{ request_id: string, content: string, other: Record<string, unknown> }> } }).data.items
  t.equal(rows.length, 6, 'alice sees her six failed requests')
  for (const never of [...NEVER, 'Incorrect API key', 'invalid_api_key', 'non-JSON', 'text/html', 'admin_info', 'non_json_answer']) {
    t.notOk(self.body.includes(never), `the self log never shows "${never}"`)
  }
  for (const row of rows) {
    const event = events.find((e) => e.request_id === row.request_id)!
    t.equal(row.content, event.error?.message, 'each row says what its client was told')
    t.notOk('admin_info' in row.other || 'channel_id' in row, 'no admin_info, no channel')
  }

  // The admin's log view: the classification, cleaned; never the page nor the raw messages.
  const admin = await cp.inject({ url: '/api/log/?p=1&page_size=100', headers: root })
  const adminRows = (admin.json() as { data: { items: Array<{ channel_id: number, other: { admin_info: { error?: unknown } } }> } }).data.items
  for (const [what, id] of Object.entries(ids) as Array<[keyof typeof ids, number]>) {
    t.same(adminRows.find((r) => r.channel_id === id)?.other.admin_info.error, expected[what], `${what}: the admin log shows status, code and cleaned message`)
  }
  for (const never of NEVER) t.notOk(admin.body.includes(never), `the admin log never shows "${never}"`)

  // The channel test: what the answer was, never what it said.
  for (const [what, status] of [['page500', 500], ['page200', 200]] as const) {
    const tested = await cp.inject({ url: `/api/channel/test/${ids[what]}`, headers: root })
    t.match(tested.json(), { success: false, message: `upstream answered HTTP ${status}${status === 200 ? ' (non_json_answer)' : ''}: non-JSON answer (text/html, ${bytes} bytes)` }, `${what}: the channel test names the answer's type and size`)
    for (const never of NEVER) t.notOk(tested.body.includes(never), `${what}: the channel test never shows "${never}"`)
  }
  const keyTest = await cp.inject({ url: `/api/channel/test/${ids.key401}`, headers: root })
  t.match(keyTest.json(), { success: false, message: 'upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided: sk-***. Manage keys at [redacted]' }, 'a refused key: status, code and the cleaned message')
})
