import { connect } from 'node:net'
import { PassThrough } from 'node:stream'
import { loadGatewayConfig } from '@modelgate/config'
import { loggerOptions } from '@modelgate/logger'
import { fastifyOptions, MAX_URL_BYTES } from '@modelgate/service'
import Fastify from 'fastify'
import t from 'tap'
import gateway from '../src/app.js'
import { buildGateway, fakeOpenAI, reload, seedChannel, seedToken, seedUser } from './fixtures.js'

interface RawAnswer { status: number, body: string, ms: number }

/**
 * One HTTP/1.1 request written byte for byte (fetch and node:http refuse some of the header
 * values under test), read until the server closes the connection.
 */
async function raw (url: string, path: string, headers: Array<[string, Buffer | string]>, body = ''): Promise<RawAnswer> {
  const { hostname, port } = new URL(url)
  const head = Buffer.concat([
    Buffer.from(`POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`),
    ...headers.map(([name, value]) => Buffer.concat([Buffer.from(`${name}: `), Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8'), Buffer.from('\r\n')])),
    Buffer.from(`\r\n${body}`)
  ])
  const started = performance.now()
  const bytes = await new Promise<Buffer>((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('end', () => resolve(Buffer.concat(chunks)))
    socket.on('error', reject)
    socket.setTimeout(10_000, () => { socket.destroy(new Error('no answer within 10 s')) })
    socket.write(head)
  })
  const ms = performance.now() - started
  const text = bytes.toString('utf8')
  const split = text.indexOf('\r\n\r\n')
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)
  let payload = split === -1 ? '' : text.slice(split + 4)
  if (/\r\ntransfer-encoding: chunked/i.test(text.slice(0, split))) {
    let out = ''
    for (let rest = payload; ;) {
      const eol = rest.indexOf('\r\n')
      const size = parseInt(rest.slice(0, eol), 16)
      if (!(size > 0)) break
      out += rest.slice(eol + 2, eol + 2 + size)
      rest = rest.slice(eol + 4 + size)
    }
    payload = out
  }
  return { status, body: payload, ms }
}

const INVALID_KEY = { error: { message: 'Invalid API key', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }
const CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })

t.test('SEC-06 hostile credentials at the auth edge: injection, 10 KB, NUL and junk keys get the same 401 on all four carriers, fast, and ?key= never reaches the access log', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const valid = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await app.db.insertInto('options').values({ key: 'ModelRatio', value: '{"gpt-4o-mini":0.075}' }).execute()
  await reload(app)
  const tokensBefore = await app.db.selectFrom('tokens').selectAll().orderBy('id').execute()
  const usersBefore = await app.db.selectFrom('users').select(['id', 'quota', 'status']).orderBy('id').execute()

  const hostile: Array<[string, Buffer]> = [
    ['SQL: \' OR 1=1 --', Buffer.from('\' OR 1=1 --')],
    ['SQL: sk-\' OR \'1\'=\'1', Buffer.from('sk-\' OR \'1\'=\'1')],
    ['SQL: stacked statement', Buffer.from('sk-x\'; DROP TABLE tokens; --')],
    ['SQL: union', Buffer.from('sk-\' UNION SELECT key_hash FROM tokens --')],
    ['LIKE wildcard %', Buffer.from('sk-%')],
    ['LIKE wildcards _', Buffer.from(`sk-${'_'.repeat(48)}`)],
    ['10 KB key', Buffer.from(`sk-${'A'.repeat(10 * 1024)}`)],
    ['10 KB key with a channel pin', Buffer.from(`sk-${'a'.repeat(10 * 1024)}-1`)],
    ['10 KB of dashes and digits', Buffer.from(`sk-${'1-'.repeat(5 * 1024)}`)],
    ['UTF-8 junk', Buffer.from('sk-日本語🙂\u202e\ufeff')],
    ['invalid UTF-8 bytes', Buffer.from([0x73, 0x6b, 0x2d, 0xff, 0xfe, 0xc3, 0x28, 0x80])],
    ['the stored hash of a real key', Buffer.from(tokensBefore[0]!.key_hash)],
    ['the sealed copy of a real key', Buffer.from(tokensBefore[0]!.key_encrypted)],
    ['a real key with one character changed', Buffer.from(`${valid.key.slice(0, -1)}${valid.key.endsWith('0') ? '1' : '0'}`)],
    ['a real key\'s first half', Buffer.from(valid.key.slice(0, 27))],
    ['a real key with a NUL appended (query only)', Buffer.from(`${valid.key}\0`)]
  ]
  const carriers: Array<[string, (v: Buffer) => { path: string, headers: Array<[string, Buffer]> }]> = [
    ['Authorization: Bearer', (v) => ({ path: '/v1/chat/completions', headers: [['authorization', Buffer.concat([Buffer.from('Bearer '), v])]] })],
    ['x-api-key', (v) => ({ path: '/v1/chat/completions', headers: [['x-api-key', v]] })],
    ['x-goog-api-key', (v) => ({ path: '/v1/chat/completions', headers: [['x-goog-api-key', v]] })],
    ['?key=', (v) => ({ path: `/v1/chat/completions?key=${[...v].map((b) => /[\w.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`).join('')}`, headers: [] })]
  ]

  const times: number[] = []
  for (const [what, value] of hostile) {
    const headerSafe = !value.includes(0)
    const answers: Array<{ carrier: string, status: number, body: string }> = []
    for (const [carrier, place] of carriers) {
      if (!headerSafe && carrier !== '?key=') continue
      const { path, headers } = place(value)
      const res = await raw(url, path, headers, CHAT)
      times.push(res.ms)
      if (path.length > MAX_URL_BYTES) {
        // A URL over the edge's limit is refused before any lookup, whatever it carries.
        t.equal(res.status, 414, `${what} via ${carrier}: the URL is over ${MAX_URL_BYTES} bytes, 414`)
        t.match(JSON.parse(res.body), { error: { code: 'uri_too_long' } })
        continue
      }
      answers.push({ carrier, status: res.status, body: res.body })
      t.equal(res.status, 401, `${what} via ${carrier}: 401`)
      t.same(JSON.parse(res.body), INVALID_KEY, `${what} via ${carrier}: OpenAI's invalid key error`)
    }
    t.ok(answers.every((a) => a.status === answers[0]!.status && a.body === answers[0]!.body), `${what}: byte for byte the same answer on every carrier`)
  }
  times.sort((a, b) => a - b)
  const median = times[Math.floor(times.length / 2)]!
  t.ok(median < 100, `refused fast: median ${median.toFixed(1)} ms`)
  t.ok(times.at(-1)! < 1000, `slowest refusal ${times.at(-1)!.toFixed(1)} ms`)

  // A NUL (or CR/LF) inside a header value is not HTTP: the parser refuses it before any lookup.
  for (const [name, value] of [['authorization', `Bearer ${valid.key}\0`], ['x-api-key', 'sk-\0\' OR 1=1 --'], ['x-goog-api-key', '\0']] as const) {
    const res = await raw(url, '/v1/chat/completions', [[name, Buffer.from(value)]], CHAT)
    t.equal(res.status, 400, `a NUL in ${name} is a 400 from the HTTP parser, not a 500`)
  }

  t.equal(upstream.requests.length, 0, 'no hostile key reached the upstream')
  t.same(await app.db.selectFrom('tokens').selectAll().orderBy('id').execute(), tokensBefore, 'tokens unchanged')
  t.same(await app.db.selectFrom('users').select(['id', 'quota', 'status']).orderBy('id').execute(), usersBefore, 'users unchanged')
  for (const [carrier, place] of carriers) {
    const { path, headers } = place(Buffer.from(valid.key))
    const res = await raw(url, path, headers, CHAT)
    t.equal(res.status, 200, `the real key still works via ${carrier}, after all that`)
  }

  // Access lines are written at debug and trace only (info, the default, has none): at every
  // level a replica may run at, ?key= is redacted and no key reaches a log line.
  const injection = '\' OR 1=1 --'
  const queries = [
    `?key=${valid.key}`,
    `?alt=sse&key=${valid.key}&x=1`,
    `?KEY=${valid.key}`,
    `?key=${encodeURIComponent(injection)}`
  ]
  for (const level of ['info', 'debug'] as const) {
    const lines: string[] = []
    const stream = new PassThrough()
    stream.on('data', (c: Buffer) => lines.push(...c.toString().split('\n').filter((l) => l !== '')))
    const logged = Fastify({ ...fastifyOptions('gateway', level, { trustRequestId: false }), logger: { ...loggerOptions({ service: 'gateway', level }), stream } })
    await logged.register(gateway, { config: loadGatewayConfig(env) })
    await logged.listen({ port: 0, host: '127.0.0.1' })
    t.teardown(() => logged.close())
    const address = logged.server.address()
    const loggedUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
    for (const q of queries) await raw(loggedUrl, `/v1/chat/completions${q}`, [], CHAT)
    await raw(loggedUrl, '/v1/chat/completions', [['authorization', `Bearer ${valid.key}`], ['x-api-key', valid.key], ['x-goog-api-key', valid.key]], CHAT)
    if (level === 'debug') {
      const requestLines = lines.filter((l) => l.includes('/v1/chat/completions'))
      t.ok(requestLines.length >= queries.length, `at debug the access log has the requests (${requestLines.length} lines)`)
      t.ok(requestLines.filter((l) => /[?&]key=\[redacted\]/i.test(l)).length >= queries.length, 'each ?key= shows as [redacted]')
    }
    const body = valid.key.slice(3)
    t.notOk(lines.some((l) => l.includes(body)), `at ${level}: the real key appears in no log line, from the query or a header`)
    t.notOk(lines.some((l) => l.includes(encodeURIComponent(injection)) || l.includes(injection)), `at ${level}: nor the hostile value`)
  }
})
