import { ROLES } from '@modelgate/contracts'
import { connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { build, login, ROOT, type Session, userSession } from './helpers.js'

const MiB = 1024 * 1024

/** A control plane listening on a real port, as the gateway's proxy and browsers reach it. */
async function listening (app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

async function post (url: string, path: string, body: NonNullable<RequestInit['body']>, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
  const text = await res.text()
  let json: unknown
  try { json = JSON.parse(text) } catch { json = text }
  return { status: res.status, json }
}

/** A console call through inject, timed. */
async function call (app: FastifyInstance, s: Session, method: 'GET' | 'POST' | 'PUT', url: string, payload?: string, contentType = 'application/json') {
  const started = Date.now()
  const res = await app.inject({ method, url, headers: { ...s.headers, 'accept-language': 'en', ...(payload === undefined ? {} : { 'content-type': contentType }) }, ...(payload === undefined ? {} : { payload }) })
  let body: unknown
  try { body = res.json() } catch { body = res.body }
  return { status: res.statusCode, body, ms: Date.now() - started }
}

/** A raw HTTP/1.1 exchange; resolves with what came back before the server closed or `ms` passed. */
async function raw (url: string, request: string, ms = 5000): Promise<string> {
  const { hostname, port } = new URL(url)
  return await new Promise((resolve) => {
    const chunks: Buffer[] = []
    const done = () => { clearTimeout(timer); socket.destroy(); resolve(Buffer.concat(chunks).toString('latin1')) }
    const socket = connect(Number(port), hostname, () => { socket.write(request) })
    const timer = setTimeout(done, ms)
    socket.on('data', (c: Buffer) => {
      chunks.push(c)
      if (Buffer.concat(chunks).toString('latin1').includes('\r\n\r\n')) done()
    })
    socket.on('error', done)
    socket.on('close', done)
  })
}

const consoleError = { success: false, message: String }

t.test('SEC-26 oversized bodies: console bodies over 1 MiB are 413, gzip bodies are never inflated, and the service stays healthy', async (t) => {
  const app = await build(t)
  const url = await listening(app)
  const big = JSON.stringify({ username: 'root', password: 'x'.repeat(MiB + 10) })

  const declared = await post(url, '/api/user/login', big)
  t.equal(declared.status, 413, 'a body over 1 MiB is 413')
  t.match(declared.json, consoleError, 'in the console\'s error shape')

  const chunked = new ReadableStream<Uint8Array>({
    start (c) { for (let i = 0; i < 24; i++) c.enqueue(new Uint8Array(64 * 1024).fill(0x20)); c.close() }
  })
  const streamed = await post(url, '/api/user/login', chunked)
  t.equal(streamed.status, 413, 'a chunked body over 1 MiB is 413')
  t.match(streamed.json, consoleError)

  // 16 MiB of whitespace around a valid login compresses to a few KiB.
  const bomb = gzipSync(Buffer.concat([Buffer.from('{"username":"root",'), Buffer.alloc(16 * MiB, 0x20), Buffer.from('"password":"123456"}')]))
  t.ok(bomb.length < 100_000, 'the bomb itself is small')
  const gz = await post(url, '/api/user/login', bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
  t.ok(gz.status >= 400 && gz.status < 500, `a gzip-encoded body is refused, not inflated (${gz.status})`)
  t.match(gz.json, consoleError)

  const boundary = 'B'.repeat(10_000)
  const multipart = await post(url, '/api/user/login', `--${boundary}\r\nContent-Disposition: form-data; name="username"\r\n\r\nroot\r\n--${boundary}--\r\n`,
    { 'content-type': `multipart/form-data; boundary=${boundary}` })
  t.equal(multipart.status, 415, 'multipart (with a 10 000-character boundary) is not a console format')
  t.match(multipart.json, consoleError)

  t.equal((await fetch(`${url}/healthz`)).status, 200, 'the process is healthy')
  const ok = await post(url, '/api/user/login', JSON.stringify({ username: ROOT.username, password: ROOT.password }))
  t.match(ok, { status: 200, json: { success: true } }, 'a normal login still works')
})

t.test('SEC-27 malformed JSON, invalid UTF-8, prototype pollution, deep nesting and wrong content types are 4xx in the console\'s shape, never a 500', async (t) => {
  const app = await build(t)
  const alice = await userSession(app, 'alice')

  const refused: Array<[string, string, string?]> = [
    ['truncated JSON', '{"name":"k","remain_quota":'],
    ['a bare string', '"k"'],
    ['__proto__', '{"name":"k","__proto__":{"role":100,"polluted":"yes"}}'],
    ['constructor.prototype', '{"name":"k","constructor":{"prototype":{"role":100,"polluted":"yes"}}}'],
    ['10 000 nested arrays', `{"name":${'['.repeat(10_000)}${']'.repeat(10_000)}}`],
    ['a form-encoded body', 'name=k', 'application/x-www-form-urlencoded'],
    ['text/plain', '{"name":"k"}', 'text/plain'],
    ['XML', '<name>k</name>', 'application/xml']
  ]
  for (const [what, payload, type] of refused) {
    const res = await call(app, alice, 'POST', '/api/token/', payload, type)
    t.ok(res.status >= 400 && res.status < 500, `${what}: ${res.status}`)
    t.match(res.body, consoleError, `${what}: the console's error shape`)
  }
  t.equal(await app.db.selectFrom('tokens').select('id').where('user_id', '=', alice.user.id).executeTakeFirst(), undefined, 'no token was created')

  // A pollution attempt on the caller's own account changes nothing, here or in the prototype.
  for (const payload of ['{"display_name":"a","__proto__":{"role":100}}', '{"display_name":"a","constructor":{"prototype":{"role":100}}}']) {
    const res = await call(app, alice, 'PUT', '/api/user/self', payload)
    t.equal(res.status, 400, 'a self update carrying __proto__ or constructor.prototype is 400')
    t.match(res.body, consoleError)
  }
  const me = await app.db.selectFrom('users').select(['role', 'display_name']).where('id', '=', alice.user.id).executeTakeFirstOrThrow()
  t.equal(me.role, ROLES.common, 'the role is unchanged')
  t.equal(({} as Record<string, unknown>)['role'], undefined, 'Object.prototype untouched')
  t.equal(({} as Record<string, unknown>)['polluted'], undefined)

  // Duplicate keys: the last one wins, consistently.
  const dup = await call(app, alice, 'POST', '/api/token/', '{"name":"first","name":"second"}')
  t.match(dup, { status: 200, body: { success: true, data: { name: 'second' } } })

  // Invalid UTF-8 bytes and lone surrogates in a name are stored as valid text (or refused), never a 500.
  for (const [what, payload] of [
    ['invalid UTF-8 bytes', Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('b"}')])],
    ['lone surrogates', Buffer.from('{"name":"x\\ud800y\\udfffz"}')]
  ] as const) {
    const res = await app.inject({ method: 'POST', url: '/api/token/', headers: { ...alice.headers, 'content-type': 'application/json' }, payload })
    t.ok(res.statusCode < 500, `${what}: no server error (${res.statusCode})`)
  }
  const list = await call(app, alice, 'GET', '/api/token/?p=1&size=100')
  t.equal(list.status, 200, 'the list still loads')
  for (const item of (list.body as { data: { items: Array<{ name: string }> } }).data.items) {
    t.equal(Buffer.from(item.name, 'utf8').toString('utf8'), item.name, `${JSON.stringify(item.name)} is well-formed text`)
  }
})

t.test('SEC-27 wildcard search: 5 000 % and _ are refused fast on tokens, users, channels, redemptions and logs; short ones match literally', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const alice = await userSession(app, 'alice')
  await userSession(app, 'bob_smith')
  for (const name of ['plain key', '50%_off']) await call(app, alice, 'POST', '/api/token/', JSON.stringify({ name }))

  const long = encodeURIComponent('%_'.repeat(2500))
  const searches: Array<[string, Session, string]> = [
    ['tokens', alice, `/api/token/search?keyword=${long}`],
    ['tokens by key', alice, `/api/token/search?token=${long}`],
    ['users', root, `/api/user/search?keyword=${long}`],
    ['channels', root, `/api/channel/search?keyword=${long}`],
    ['channels by model', root, `/api/channel/search?model=${long}`],
    ['redemptions', root, `/api/redemption/search?keyword=${long}`],
    ['logs by token', root, `/api/log/?token_name=${long}`],
    ['logs by user', root, `/api/log/?username=${long}`],
    ['logs by model', root, `/api/log/?model_name=${long}`],
    ['own logs', alice, `/api/log/self/?token_name=${long}`],
    ['log stats', root, `/api/log/stat?token_name=${long}`]
  ]
  for (const [what, s, path] of searches) {
    const res = await call(app, s, 'GET', path)
    t.equal(res.status, 400, `${what}: a 5 000-character keyword is 400`)
    t.match(res.body, consoleError, `${what}: the console's error shape`)
    t.ok(res.ms < 1000, `${what}: answered in ${res.ms} ms`)
  }

  const names = async (q: string) => ((await call(app, alice, 'GET', `/api/token/search?keyword=${encodeURIComponent(q)}`)).body as { data: { items: Array<{ name: string }> } }).data.items.map((i) => i.name)
  t.same(await names('%'), ['50%_off'], 'a % keyword matches only a literal %')
  t.same(await names('_'), ['50%_off'], 'an _ keyword matches only a literal _')
  t.same(await names('%_%_'), [], '%_%_ is literal text, not a pattern')
  t.same(await names('%'.repeat(100)), [], '100 % (the longest keyword allowed) match nothing')
  const users = async (q: string) => ((await call(app, root, 'GET', `/api/user/search?keyword=${encodeURIComponent(q)}`)).body as { data: { items: Array<{ username: string }> } }).data.items.map((u) => u.username)
  t.same(await users('_'), ['bob_smith'], 'an _ user keyword matches only a literal _')
  t.same(await users('%'), [], 'a % user keyword matches no one')
  const logs = await call(app, root, 'GET', `/api/log/?token_name=${encodeURIComponent('%')}`)
  t.match(logs, { status: 200, body: { success: true, data: { total: 0 } } }, 'a % log filter is an exact name, not a pattern')
})

t.test('SEC-28 huge headers and slowloris: oversized headers are 431, the head and body timers are set, and slow clients do not starve healthy requests', async (t) => {
  const app = await build(t)
  const url = await listening(app)
  const host = new URL(url).host
  const get = (extra: string) => `GET /api/status HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n${extra}\r\n`

  t.match(await raw(url, get(`X-Big: ${'a'.repeat(64 * 1024)}\r\n`)), /^HTTP\/1\.1 431 /, 'a 64 KiB header is 431')
  t.match(await raw(url, get(`Cookie: session=${'a'.repeat(64 * 1024)}\r\n`)), /^HTTP\/1\.1 431 /, 'a 64 KiB cookie is 431')
  t.match(await raw(url, get(Array.from({ length: 1000 }, (_, i) => `X-Pad-${i}: ${'v'.repeat(12)}\r\n`).join(''))), /^HTTP\/1\.1 431 /, '1 000 headers (about 24 KiB) are 431')
  t.match(await raw(url, get(Array.from({ length: 1000 }, (_, i) => `x${i}: v\r\n`).join(''))), /^HTTP\/1\.1 (200|431) /, '1 000 tiny headers are served or refused, never a crash')

  // Node closes connections whose head is incomplete after headersTimeout; the case's budget is 60 s.
  t.ok(app.server.headersTimeout > 0 && app.server.headersTimeout <= 60_000, `headersTimeout ${app.server.headersTimeout} ms`)
  // And the whole request (a body at 1 byte per 10 s) within requestTimeout, shared by every service.
  t.equal(app.server.requestTimeout, 60_000, 'requestTimeout is 60 s')

  // Warm the route up first, so the timings below measure the attack, not a cold start.
  await (await fetch(`${url}/api/status`)).arrayBuffer()
  const sockets: Socket[] = []
  t.teardown(() => { for (const s of sockets) s.destroy() })
  const { hostname, port } = new URL(url)
  for (let i = 0; i < 200; i++) {
    const slowHead = connect(Number(port), hostname, () => { slowHead.write(`POST /api/user/login HTTP/1.1\r\nHost: ${host}\r\nX-Slow: `) })
    const slowBody = connect(Number(port), hostname, () => {
      slowBody.write(`POST /api/user/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`)
    })
    slowHead.on('error', () => {})
    slowBody.on('error', () => {})
    sockets.push(slowHead, slowBody)
  }
  await new Promise((r) => setTimeout(r, 300))
  const times: number[] = []
  for (let i = 0; i < 20; i++) {
    const started = Date.now()
    const res = await fetch(`${url}/api/status`)
    t.equal(res.status, 200)
    await res.arrayBuffer()
    times.push(Date.now() - started)
  }
  t.ok(Math.max(...times) < 1000, `healthy requests stay fast during the attack (slowest ${Math.max(...times)} ms)`)
})
