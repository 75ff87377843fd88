import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { type AddressInfo, connect, type Socket } from 'node:net'
import { loadControlPlaneConfig } from '@modelgate/config'
import controlPlane from '@modelgate/control-plane'
import { EDGE_PROOF_HEADER, edgeProof, fastifyOptions, trustProxyOption } from '@modelgate/service'
import { createServiceEnv, TEST_SECRETS, until } from '@modelgate/testing'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { WebSocketServer } from 'ws'
import { buildGateway, reload, seedChannel, seedToken, seedUser } from './fixtures.js'

// The HTTP edge's framing corpus, on raw sockets. Each hostile request is followed by a request
// of another client, which must get its own answer, while every hop behind the gateway runs on
// one connection (the proxy's pool forced to one; the relay's upstream sees one socket), so a
// poisoned connection would certainly be reused. The upstreams record every request they parse:
// none may ever see a request the gateway did not mean to send (a smuggled one).

/** One parsed HTTP response. */
interface RawResponse { status: number, headers: Record<string, string>, body: string }
/** What one raw connection got: the responses parsed, and whether the gateway closed it. */
interface Exchange { responses: RawResponse[], closed: boolean }

/** Parses complete responses off the front of `data` (Content-Length or chunked bodies). */
function parseResponses (data: Buffer, out: RawResponse[], head: boolean): Buffer {
  for (;;) {
    const end = data.indexOf('\r\n\r\n')
    if (end < 0) return data
    const lines = data.subarray(0, end).toString('latin1').split('\r\n')
    const status = Number(lines[0]!.split(' ')[1])
    const headers: Record<string, string> = {}
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':')
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim()
    }
    let rest = data.subarray(end + 4)
    let body: Buffer
    if (status === 101) {
      out.push({ status, headers, body: '' })
      return rest
    }
    if (head) {
      // A HEAD's answer announces a length but carries no body.
      out.push({ status, headers, body: '' })
      data = rest
      continue
    }
    if (headers['transfer-encoding'] === 'chunked') {
      const parts: Buffer[] = []
      for (;;) {
        const lineEnd = rest.indexOf('\r\n')
        if (lineEnd < 0) return data
        const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16)
        if (rest.length < lineEnd + 2 + size + 2) return data
        parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size))
        rest = rest.subarray(lineEnd + 2 + size + 2)
        if (size === 0) break
      }
      body = Buffer.concat(parts)
    } else {
      const length = Number(headers['content-length'] ?? 0)
      if (rest.length < length) return data
      body = rest.subarray(0, length)
      rest = rest.subarray(length)
    }
    out.push({ status, headers, body: body.toString('utf8') })
    data = rest
  }
}

/**
 * Writes `parts` on a new connection (a function part is run between writes: a pause, or the
 * end of the test's patience) and collects responses until `want` final ones are parsed, the gateway
 * closes the connection, or 10 s pass.
 */
async function exchange (port: number, parts: Array<string | Buffer | ((s: Socket) => Promise<void>)>, want = 1, head = false): Promise<Exchange> {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  const responses: RawResponse[] = []
  let pending: Buffer = Buffer.alloc(0)
  let closed = false
  socket.on('data', (b: Buffer) => { pending = parseResponses(Buffer.concat([pending, b]), responses, head) })
  socket.on('close', () => { closed = true })
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  for (const part of parts) {
    if (closed) break
    if (typeof part === 'function') await part(socket)
    else socket.write(part)
  }
  // Interim answers (100 Continue) come before the final one and do not count toward `want`.
  await until(() => closed || responses.filter((r) => r.status < 100 || r.status > 199 || r.status === 101).length >= want, 10_000, 10)
  // An answer that says it closes the connection: wait for the close too.
  if (responses.at(-1)?.headers['connection'] === 'close') await until(() => closed, 5000, 10)
  socket.destroy()
  return { responses, closed }
}

const pause = (ms: number) => async () => { await new Promise((resolve) => setTimeout(resolve, ms)) }
const abort = async (s: Socket) => { s.destroy() }

/** A hostile request: the bytes, and what its own connection must get. */
interface Case {
  name: string
  parts: Array<string | Buffer | ((s: Socket) => Promise<void>)>
  /** Statuses its connection may get (in order); the gateway's choice where Node or the edge refuses. */
  expect: (ex: Exchange) => string | undefined
  want?: number
  /** A HEAD request: its answer has no body. */
  head?: boolean
}

/** A request that smuggles `inner` in a body: what a desynchronised hop would run as its own. */
function smuggled (host: string, path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`
}

const refused = (status = 400) => (ex: Exchange) =>
  ex.responses[0]?.status === status && ex.closed ? undefined : `expected ${status} and a closed connection, got ${JSON.stringify(ex.responses.map((r) => r.status))} closed=${ex.closed}`
const answered = (...statuses: number[]) => (ex: Exchange) =>
  statuses.includes(ex.responses[0]?.status ?? 0) ? undefined : `expected one of ${statuses.join('/')}, got ${JSON.stringify(ex.responses.map((r) => r.status))}`
const nothing = (ex: Exchange) => ex.responses.length === 0 ? undefined : `expected no response, got ${ex.responses[0]!.status}`

/**
 * The corpus for one route: `head` is the request line's method-less part and the route's own
 * headers (the host included), `body` a well-formed body for it, `evil` the path a smuggled
 * request would ask for.
 */
function corpus (opts: { path: string, headers: string, body: string, evil: string, bodyLimit: number, okStatuses: number[], upgrade?: boolean }): Case[] {
  const { path, headers, body, evil } = opts
  const inner = smuggled('127.0.0.1', evil)
  const chunkedInner = `${inner.length.toString(16)}\r\n${inner}\r\n0\r\n\r\n`
  const len = (s: string) => Buffer.byteLength(s)
  const post = (extra: string, payload: string) => `POST ${path} HTTP/1.1\r\n${headers}${extra}\r\n${payload}`
  const cases: Case[] = []
  for (const method of ['GET', 'HEAD']) {
    const head = method === 'HEAD'
    cases.push({ name: `${method} with a body by length`, parts: [`${method} ${path} HTTP/1.1\r\n${headers}Content-Length: ${len(inner)}\r\n\r\n${inner}`], expect: refused(), head })
    cases.push({ name: `${method} with a chunked body`, parts: [`${method} ${path} HTTP/1.1\r\n${headers}Transfer-Encoding: chunked\r\n\r\n${chunkedInner}`], expect: refused(), head })
  }
  for (const method of ['DELETE', 'OPTIONS']) {
    // Read whole by Node and, where a route forwards them, forwarded with their exact length.
    cases.push({ name: `${method} with a body by length`, parts: [`${method} ${path} HTTP/1.1\r\n${headers}Content-Type: text/plain\r\nContent-Length: ${len(inner)}\r\n\r\n${inner}`], expect: answered(200, 204, 400, 404, 405) })
    cases.push({ name: `${method} with a chunked body`, parts: [`${method} ${path} HTTP/1.1\r\n${headers}Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n${chunkedInner}`], expect: answered(200, 204, 400, 404, 405) })
  }
  cases.push(
    { name: 'Content-Length and Transfer-Encoding together', parts: [post(`Content-Length: ${len(body) + 4}\r\nTransfer-Encoding: chunked\r\n`, `${len(body).toString(16)}\r\n${body}\r\n0\r\n\r\n${inner}`)], expect: refused() },
    { name: 'two differing Content-Lengths', parts: [post(`Content-Length: ${len(body)}\r\nContent-Length: ${len(body) + len(inner)}\r\n`, body + inner)], expect: refused() },
    { name: 'Content-Length with a sign', parts: [post(`Content-Length: +${len(body)}\r\n`, body + inner)], expect: refused() },
    { name: 'Content-Length with inner spaces', parts: [post(`Content-Length: ${len(body)} ${len(inner)}\r\n`, body + inner)], expect: refused() },
    { name: 'Content-Length in hex', parts: [post(`Content-Length: 0x${len(body).toString(16)}\r\n`, body + inner)], expect: refused() },
    { name: 'Transfer-Encoding: chunked, identity', parts: [post('Transfer-Encoding: chunked, identity\r\n', `${len(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`)], expect: refused() },
    { name: 'Transfer-Encoding upper case', parts: [post('Transfer-Encoding: CHUNKED\r\n', `${len(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`)], expect: answered(...opts.okStatuses) },
    { name: 'Transfer-Encoding with a trailing space', parts: [post('Transfer-Encoding: chunked \r\n', `${len(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`)], expect: answered(...opts.okStatuses) },
    { name: 'Transfer-Encoding by obs-fold', parts: [post(`Content-Length: ${len(body)}\r\nTransfer-Encoding:\r\n chunked\r\n`, body + inner)], expect: refused() },
    { name: 'Expect: 100-continue without a body', parts: [`GET ${path} HTTP/1.1\r\n${headers}Expect: 100-continue\r\n\r\n`], expect: (ex) => ex.responses.some((r) => r.status > 100) ? undefined : 'no final answer', want: 1 },
    { name: 'pipelined requests on one connection', parts: [post(`Content-Length: ${len(body)}\r\n`, body) + post(`Content-Length: ${len(body)}\r\n`, body)], expect: (ex) => ex.responses.length === 2 ? answered(...opts.okStatuses)(ex) : `expected two answers, got ${ex.responses.length}`, want: 2 },
    { name: 'HTTP/1.0 keep-alive', parts: [`POST ${path} HTTP/1.0\r\n${headers}Connection: keep-alive\r\nContent-Length: ${len(body)}\r\n\r\n${body}`], expect: answered(...opts.okStatuses) },
    { name: 'a client that aborts mid-body', parts: [post(`Content-Length: ${len(body) + 100}\r\n`, body), pause(50), abort], expect: nothing },
    { name: 'a body over the limit arriving slowly', parts: [post('Transfer-Encoding: chunked\r\n', ''), ...slowChunks(opts.bodyLimit)], expect: (ex) => ex.closed && (ex.responses.length === 0 || ex.responses[0]!.status === 413) ? undefined : `expected 413 or a cut, got ${JSON.stringify(ex.responses.map((r) => r.status))} closed=${ex.closed}` },
    { name: 'bare LF line endings', parts: [`POST ${path} HTTP/1.1\n${headers.replaceAll('\r\n', '\n')}Content-Length: ${len(body)}\n\n${body}`], expect: refused() },
    { name: 'a NUL in a header', parts: [post(`X-Note: a\0b\r\nContent-Length: ${len(body)}\r\n`, body)], expect: refused() }
  )
  if (opts.upgrade === true) {
    // The realtime route takes GET upgrades: its hostile variants announce bodies on the upgrade.
    return cases.filter((c) => c.name.startsWith('GET') || c.name.startsWith('HEAD') || ['bare LF line endings', 'a NUL in a header', 'Expect: 100-continue without a body'].includes(c.name))
  }
  return cases
}

/** A chunked body larger than `limit`, in 8 pieces 20 ms apart. */
function slowChunks (limit: number): Array<string | (() => Promise<void>)> {
  const piece = Math.ceil(limit / 6)
  const chunk = `${piece.toString(16)}\r\n${'x'.repeat(piece)}\r\n`
  return Array.from({ length: 8 }, () => [chunk, pause(20)]).flat()
}

/** Every request an upstream parsed: the method, URL, body and the connection it came on. */
interface Seen { method: string, url: string, body: string, socket: number, headers: IncomingMessage['headers'] }

/** A keep-alive HTTP server that records what it parses and answers with `answer`. */
async function recordingServer (t: Test, answer: (seen: Seen, res: ServerResponse) => void): Promise<{ url: string, seen: Seen[], connections: { open: number, most: number } }> {
  const seen: Seen[] = []
  const connections = { open: 0, most: 0 }
  const sockets = new WeakMap<object, number>()
  let next = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let id = sockets.get(req.socket)
      if (id === undefined) sockets.set(req.socket, id = ++next)
      const s: Seen = { method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(chunks).toString(), socket: id, headers: req.headers }
      seen.push(s)
      answer(s, res)
    })
  })
  server.on('connection', (socket) => {
    connections.most = Math.max(connections.most, ++connections.open)
    socket.once('close', () => { connections.open-- })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, connections }
}

/** An OpenAI-speaking upstream that answers each chat with the last message's content: every client gets its own words back. */
async function echoOpenAI (t: Test) {
  return await recordingServer(t, (s, res) => {
    let content: string
    try { content = String((JSON.parse(s.body) as { messages: Array<{ content: string }> }).messages.at(-1)?.content) } catch { content = '' }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }))
  })
}

/** A control plane stand-in that echoes what it was sent. */
async function echoControlPlane (t: Test) {
  return await recordingServer(t, (s, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ method: s.method, url: s.url, body: s.body, ip: s.headers['x-forwarded-for'], proof: s.headers[EDGE_PROOF_HEADER] }))
  })
}

/** A realtime upstream: accepts the upgrade and says session.created, then answers each event with its own id. */
async function fakeRealtime (t: Test) {
  const upgrades: string[] = []
  const wss = new WebSocketServer({ noServer: true })
  const server = createServer((_req, res) => { res.writeHead(404).end() })
  server.on('upgrade', (req, socket, head) => {
    upgrades.push(req.url ?? '')
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.send(JSON.stringify({ type: 'session.created', event_id: 'e0', session: { id: 'sess_1' } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { for (const c of wss.clients) c.terminate(); server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, upgrades }
}

t.test('framing corpus: no hostile request reaches another client, on the console proxy, the relay and the realtime upgrade', async (t) => {
  const cp = await echoControlPlane(t)
  const upstream = await echoOpenAI(t)
  const realtime = await fakeRealtime(t)
  const { app, url } = await buildGateway(t, { CONTROL_PLANE_URL: cp.url, CONTROL_PLANE_CONNECTIONS: '1', RELAY_BODY_LIMIT_MB: '1' })
  const port = Number(new URL(url).port)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await seedChannel(app.db, { baseUrl: realtime.url, models: ['gpt-4o-realtime-preview'] })
  await reload(app)
  const proof = edgeProof(TEST_SECRETS.SESSION_SECRET)
  const host = `Host: 127.0.0.1:${port}\r\n`
  let n = 0

  /** Another client's console request: it must come back as its own, with its own address and the proof. */
  const consoleCheck = async (t: Test, label: string) => {
    const who = `B-${++n}`
    const body = JSON.stringify({ who })
    const ex = await exchange(port, [`POST /api/echo?who=${who} HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`])
    const res = ex.responses[0]
    t.same(res === undefined ? undefined : { status: res.status, ...JSON.parse(res.body) }, { status: 200, method: 'POST', url: `/api/echo?who=${who}`, body, ip: '127.0.0.1', proof }, `${label}: the next client gets its own answer`)
  }
  /** Another client's chat: it must get its own words back. */
  const relayCheck = async (t: Test, label: string) => {
    const who = `B-${++n}`
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: who }] })
    const ex = await exchange(port, [`POST /v1/chat/completions HTTP/1.1\r\n${host}Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`])
    const res = ex.responses[0]
    t.equal(res?.status, 200, `${label}: the next client is served`)
    t.equal(res === undefined ? undefined : (JSON.parse(res.body) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, who, `${label}: with its own answer`)
  }
  /** Another client's realtime session: the upgrade goes through and the upstream's first event arrives. */
  const realtimeCheck = async (t: Test, label: string) => {
    const before = realtime.upgrades.length
    const ex = await exchange(port, [`GET /v1/realtime?model=gpt-4o-realtime-preview HTTP/1.1\r\n${host}Authorization: Bearer ${key}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`])
    t.equal(ex.responses[0]?.status, 101, `${label}: the next client's upgrade is accepted`)
    t.ok(await until(() => realtime.upgrades.length === before + 1), `${label}: and reaches the upstream once`)
  }

  const routes = [
    {
      name: 'console proxy',
      cases: corpus({ path: '/api/echo?who=A', headers: host, body: '{"who":"A"}', evil: '/api/smuggled', bodyLimit: 16 * 1024 * 1024 + 1, okStatuses: [200] }),
      check: consoleCheck
    },
    {
      name: 'relay',
      cases: corpus({ path: '/v1/chat/completions', headers: `${host}Authorization: Bearer ${key}\r\nContent-Type: application/json\r\n`, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'A' }] }), evil: '/v1/smuggled', bodyLimit: 1024 * 1024 + 1, okStatuses: [200] }),
      check: relayCheck
    },
    {
      name: 'realtime upgrade',
      cases: corpus({ path: '/v1/realtime?model=gpt-4o-realtime-preview', headers: `${host}Authorization: Bearer ${key}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n`, body: '', evil: '/v1/smuggled', bodyLimit: 1024, okStatuses: [101], upgrade: true }),
      check: realtimeCheck
    }
  ]
  for (const route of routes) {
    await t.test(route.name, async (t) => {
      for (const c of route.cases) {
        const ex = await exchange(port, c.parts, c.want ?? 1, c.head === true)
        const problem = c.expect(ex)
        t.notOk(problem, `${c.name}${problem === undefined ? '' : `: ${problem}`}`)
        await route.check(t, c.name)
      }
    })
  }

  // No upstream ever parsed a request the gateway did not mean: nothing smuggled, and one connection each.
  t.notOk(cp.seen.some((s) => s.url.includes('smuggled')), 'the control plane never saw a smuggled request')
  t.equal(cp.connections.most, 1, `the proxy held one connection to the control plane at a time (${cp.seen.length} requests on ${new Set(cp.seen.map((s) => s.socket)).size})`)
  t.notOk(upstream.seen.some((s) => s.url.includes('smuggled') || s.url !== '/v1/chat/completions'), 'the relay upstream never saw a smuggled request')
  // The relay's pool is not capped, but its connections are reused (two at once only for the
  // pipelined pair, which Node hands over together).
  const relaySockets = new Set(upstream.seen.map((s) => s.socket)).size
  t.ok(upstream.connections.most <= 2 && relaySockets <= 2, `the relay reused its upstream connections (${upstream.seen.length} requests on ${relaySockets})`)
  t.notOk(realtime.upgrades.some((u) => u.includes('smuggled')), 'the realtime upstream never saw a smuggled request')
  // Bodies forwarded are the bytes that came: a DELETE's body arrives whole, with its own length.
  const deletes = cp.seen.filter((s) => s.method === 'DELETE')
  t.equal(deletes.length, 2, 'both DELETEs with bodies were forwarded')
  for (const d of deletes) t.equal(d.body, smuggled('127.0.0.1', '/api/smuggled'), 'a DELETE body arrives exactly, as a body')
})

t.test('the reproduction: a GET with a body on the real control plane, then another client', async (t) => {
  const env = await createServiceEnv(t)
  const cpApp = Fastify({ ...fastifyOptions('control-plane', 'silent', { trustRequestId: true }), trustProxy: trustProxyOption('loopback') })
  await cpApp.register(controlPlane, { config: loadControlPlaneConfig(env) })
  await cpApp.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => cpApp.close())
  const cpBase = `http://127.0.0.1:${(cpApp.server.address() as AddressInfo).port}`
  const { url: base } = await buildGateway(t, { CONTROL_PLANE_URL: cpBase, CONTROL_PLANE_CONNECTIONS: '1' })
  const port = Number(new URL(base).port)

  for (let i = 0; i < 5; i++) {
    const attack = await exchange(port, [`GET /api/notice HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{"id":1}`])
    t.equal(attack.responses[0]?.status, 400, `try ${i}: the GET with a body is refused`)
    t.ok(attack.closed, `try ${i}: and its connection closed`)
    const other = await fetch(`${base}/api/notice`)
    t.equal(other.status, 200, `try ${i}: the next client gets 200`)
    t.equal(((await other.json()) as { success: boolean }).success, true, `try ${i}: with the notice`)
  }

  // A login smuggled with a forged X-Forwarded-For is not possible through the gateway; sent to
  // the control plane directly, without the gateway's proof, its X-Forwarded-For is ignored.
  const statuses: number[] = []
  for (let i = 0; i < 22; i++) {
    const res = await fetch(`${cpBase}/api/user/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': `192.0.2.${i}` }, body: JSON.stringify({ username: `nobody${i}`, password: 'wrong-pass' }) })
    statuses.push(res.status)
    if (res.status === 429) t.ok(res.headers.get('retry-after'), 'the lockout says when to come back')
  }
  t.same(statuses.slice(-2), [429, 429], 'X-Forwarded-For without the gateway\'s proof does not escape the address lockout')
  const proved = await fetch(`${cpBase}/api/user/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.200', [EDGE_PROOF_HEADER]: edgeProof(TEST_SECRETS.SESSION_SECRET) }, body: JSON.stringify({ username: 'nobody-x', password: 'wrong-pass' }) })
  t.equal(proved.status, 200, 'with the proof (the gateway), the forwarded address counts')
  const forged = await fetch(`${cpBase}/api/user/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.201', [EDGE_PROOF_HEADER]: 'not-the-proof' }, body: JSON.stringify({ username: 'nobody-y', password: 'wrong-pass' }) })
  t.equal(forged.status, 429, 'a wrong proof is no proof')
})

t.test('connection hygiene: header count, URL length, idle sockets, connections per address', async (t) => {
  const cp = await echoControlPlane(t)
  const { app, url } = await buildGateway(t, { CONTROL_PLANE_URL: cp.url, GATEWAY_MAX_CONNECTIONS_PER_IP: '5' })
  const port = Number(new URL(url).port)
  const head = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`

  const headers = (n: number) => Array.from({ length: n - 1 }, (_, i) => `X-H${i}: v\r\n`).join('')
  const hundred = await exchange(port, [head('/api/echo', headers(100))])
  t.equal(hundred.responses[0]?.status, 200, '100 headers are served')
  const more = await exchange(port, [head('/v1/models', headers(101))])
  t.equal(more.responses[0]?.status, 431, '101 headers: 431')
  t.match(JSON.parse(more.responses[0]!.body), { error: { code: 'too_many_headers' } })
  t.ok(more.closed, 'and the connection is closed')
  const many = await exchange(port, [head('/api/echo', headers(150))])
  t.same([many.responses[0]?.status, JSON.parse(many.responses[0]!.body)], [431, { success: false, message: 'The request has more than 100 headers' }], '150 headers on a console path: 431 in the console\'s envelope')

  const long = await exchange(port, [head(`/api/echo?q=${'a'.repeat(9000)}`)])
  t.equal(long.responses[0]?.status, 414, 'a 9 KB URL: 414')
  const huge = await exchange(port, [head(`/v1/models?q=${'a'.repeat(20_000)}`)])
  t.equal(huge.responses[0]?.status, 414, 'a 20 KB URL, past Node\'s header limit: still 414')
  t.ok(huge.closed)
  const bigHeader = await exchange(port, [head('/v1/models', `X-Big: ${'b'.repeat(20_000)}\r\n`)])
  t.equal(bigHeader.responses[0]?.status, 431, 'a 20 KB header: 431')

  t.equal(app.server.headersTimeout, 30_000, 'a client has 30 s to send its head')
  t.equal(app.server.keepAliveTimeout, 72_000, 'idle keep-alive sockets close after 72 s (past a load balancer\'s usual 60 s)')
  // Node enforces it: shortened here, an idle socket is closed on time.
  app.server.keepAliveTimeout = 500
  const idle = connect(port, '127.0.0.1')
  idle.on('error', () => {})
  let idleClosedAt = 0
  idle.on('close', () => { idleClosedAt = Date.now() })
  idle.write(head('/api/echo'))
  const servedAt = await new Promise<number>((resolve) => idle.once('data', () => resolve(Date.now())))
  t.ok(await until(() => idleClosedAt > 0, 10_000), 'the idle keep-alive socket is closed')
  t.ok(idleClosedAt - servedAt >= 400 && idleClosedAt - servedAt < 5000, `on time (${idleClosedAt - servedAt} ms after its answer)`)
  app.server.keepAliveTimeout = 72_000

  // Five open connections from one address; the sixth is refused before anything is read.
  const open: Socket[] = []
  for (let i = 0; i < 5; i++) {
    const s = connect(port, '127.0.0.1')
    s.on('error', () => {})
    await new Promise<void>((resolve) => s.once('connect', resolve))
    open.push(s)
  }
  const sixth = await exchange(port, [head('/api/echo')])
  t.equal(sixth.responses[0]?.status, 429, 'the sixth connection from one address: 429')
  t.ok(Number(sixth.responses[0]?.headers['retry-after']) >= 1, 'with Retry-After')
  t.ok(sixth.closed, 'and closed')
  const seenBefore = cp.seen.length
  open.pop()!.destroy()
  t.ok(await until(async () => (await exchange(port, [head('/api/echo')])).responses[0]?.status === 200, 10_000), 'once one closes, a new one is served')
  t.ok(cp.seen.length > seenBefore, 'and reaches the control plane')
  for (const s of open) s.destroy()
})

t.test('connections from trusted load balancers are not capped', async (t) => {
  const cp = await echoControlPlane(t)
  const { url } = await buildGateway(t, { CONTROL_PLANE_URL: cp.url, GATEWAY_MAX_CONNECTIONS_PER_IP: '2', GATEWAY_TRUST_PROXY: 'loopback' })
  const port = Number(new URL(url).port)
  const open: Socket[] = []
  for (let i = 0; i < 4; i++) {
    const s = connect(port, '127.0.0.1')
    s.on('error', () => {})
    await new Promise<void>((resolve) => s.once('connect', resolve))
    open.push(s)
  }
  const res = await exchange(port, ['GET /api/echo HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.5\r\n\r\n'])
  t.equal(res.responses[0]?.status, 200, 'a fifth connection from the load balancer is served')
  for (const s of open) s.destroy()
})

t.test('quiet edge: nothing logged per console request at info; an unreachable control plane is a 503 without a stack trace', async (t) => {
  const cp = await echoControlPlane(t)
  const lines: string[] = []
  const sink = { write: (line: string) => { lines.push(line) } }
  const { createServiceEnv: serviceEnv } = await import('@modelgate/testing')
  const env = await serviceEnv(t)
  const { loadGatewayConfig } = await import('@modelgate/config')
  const gatewayPlugin = (await import('../src/app.js')).default
  const build = async (controlPlaneUrl: string) => {
    const app = Fastify({ ...fastifyOptions('gateway', 'info', { trustRequestId: false }), logger: { level: 'info', stream: sink } })
    await app.register(gatewayPlugin, { config: loadGatewayConfig({ ...env, CONTROL_PLANE_URL: controlPlaneUrl }) })
    await app.listen({ port: 0, host: '127.0.0.1' })
    t.teardown(() => app.close())
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  }
  const up = await build(cp.url)
  lines.length = 0
  for (let i = 0; i < 5; i++) t.equal((await fetch(`${up}/api/echo?i=${i}`)).status, 200)
  t.same(lines.filter((l) => !l.includes('Redis persistence')), [], 'five console requests at info: no log line')

  const down = await build('http://127.0.0.1:1')
  lines.length = 0
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${down}/api/status`)
    t.equal(res.status, 503, 'the control plane away (starting): 503')
    t.equal(res.headers.get('retry-after'), '5')
    t.same(await res.json(), { success: false, message: 'The console is starting or unavailable, please try again shortly' })
  }
  const warned = lines.filter((l) => !l.includes('Redis persistence'))
  t.equal(warned.length, 1, `one warning for three failures: ${warned.join('')}`)
  t.match(JSON.parse(warned[0]!), { level: 40, msg: 'control plane unreachable', code: 'ECONNREFUSED' })
  t.notMatch(warned[0]!, /stack|at .*\.js/, 'no stack trace')
})
