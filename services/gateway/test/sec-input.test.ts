import { connect, type Socket } from 'node:net'
import { gzipSync } from 'node:zlib'
import { loadGatewayConfig } from '@modelgate/config'
import { QuotaStore } from '@modelgate/quota'
import { fastifyOptions } from '@modelgate/service'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import gateway from '../src/app.js'
import { buildGateway, type FakeOpenAI, fakeOpenAI, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

const MODELS = ['gpt-4o-mini', 'whisper-1']
const MiB = 1024 * 1024

/** A gateway with a 1 MiB relay limit, one channel, and a key; `balances` says nothing moved. */
async function setup (t: Test) {
  const { app, url, env } = await buildGateway(t, { RELAY_BODY_LIMIT_MB: '1' })
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { row, key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: MODELS })
  await reload(app)
  const store = new QuotaStore(app.redis)
  const post = async (path: string, body: NonNullable<RequestInit['body']>, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body, duplex: 'half' } as RequestInit)
    const text = await res.text()
    let json: unknown
    try { json = JSON.parse(text) } catch { json = text }
    return { status: res.status, json }
  }
  return { app, url, env, upstream, user, token: row, key, store, post }
}

/** Nothing was reserved, billed or sent upstream by the refused requests. */
async function nothingSpent (t: Test, app: FastifyInstance, upstream: FakeOpenAI, store: QuotaStore, what: string) {
  t.equal(upstream.requests.length, 0, `${what}: no upstream call`)
  t.same(await store.openReservations(), [], `${what}: no reservation left open`)
  t.same(await usageEvents(app), [], `${what}: no usage event`)
}

/** A raw HTTP/1.1 exchange: writes `request`, resolves with what came back before the server closed or `ms` passed. */
async function raw (url: string, request: string | Buffer, ms = 5000): Promise<string> {
  const { hostname, port } = new URL(url)
  return await new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(Number(port), hostname, () => { socket.write(request) })
    const timer = setTimeout(() => { socket.destroy(); resolve(Buffer.concat(chunks).toString('latin1')) }, ms)
    socket.on('data', (c: Buffer) => {
      chunks.push(c)
      // One answer is enough: stop at the end of its head when it says close, or of a small body.
      const text = Buffer.concat(chunks).toString('latin1')
      if (/^HTTP\/1\.1 \d{3}/.test(text) && text.includes('\r\n\r\n')) {
        const head = text.slice(0, text.indexOf('\r\n\r\n'))
        const len = /content-length: (\d+)/i.exec(head)
        if (len === null || text.length >= head.length + 4 + Number(len[1])) { clearTimeout(timer); socket.destroy(); resolve(text) }
      }
    })
    socket.on('error', (err) => {
      clearTimeout(timer)
      if (chunks.length > 0) resolve(Buffer.concat(chunks).toString('latin1'))
      else reject(err)
    })
    socket.on('close', () => { clearTimeout(timer); resolve(Buffer.concat(chunks).toString('latin1')) })
  })
}

/**
 * A client that opens a socket, writes `head`, then drips `drip` one byte every `everyMs`;
 * resolves with what the server answered and when (ms after connecting) it closed the socket.
 */
async function dripping (url: string, head: string, drip: string, everyMs: number, maxMs = 15_000): Promise<{ text: string, closedAfterMs: number }> {
  const { hostname, port } = new URL(url)
  return await new Promise((resolve) => {
    const chunks: Buffer[] = []
    const started = Date.now()
    let i = 0
    let timer: NodeJS.Timeout | undefined
    const socket = connect(Number(port), hostname, () => {
      socket.write(head)
      timer = setInterval(() => { if (i < drip.length && socket.writable) socket.write(drip[i++]!) }, everyMs)
    })
    const giveUp = setTimeout(() => { socket.destroy() }, maxMs)
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(timer)
      clearTimeout(giveUp)
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closedAfterMs: Date.now() - started })
    })
  })
}

/** The JSON body of a raw HTTP/1.1 answer (its text when it is not JSON). */
function rawJson (text: string): unknown {
  const body = text.slice(text.indexOf('\r\n\r\n') + 4)
  try { return JSON.parse(body) } catch { return body }
}

const chatBody = (content: unknown = 'hi') => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })

t.test('SEC-26 oversized bodies: relay bodies over the limit, gzip bombs and a 10 000-character multipart boundary are refused before any reservation or upstream call', async (t) => {
  const { app, url, upstream, store, post, key } = await setup(t)
  const big = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(MiB + 10) }] })

  const declared = await post('/v1/chat/completions', big)
  t.equal(declared.status, 413, 'a JSON body over the relay limit is 413')
  t.match(declared.json, { error: { type: 'invalid_request_error', code: 'FST_ERR_CTP_BODY_TOO_LARGE' } }, 'in OpenAI\'s error shape')

  // Without a content-length the limit still holds while the body streams in.
  const chunked = new ReadableStream<Uint8Array>({
    start (c) { for (let i = 0; i < 24; i++) c.enqueue(new Uint8Array(64 * 1024).fill(0x20)); c.close() }
  })
  t.equal((await post('/v1/chat/completions', chunked)).status, 413, 'a chunked body over the limit is 413')

  const anthropic = await post('/v1/messages', big, { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' })
  t.equal(anthropic.status, 413, 'the Anthropic route has the same limit')
  t.match(anthropic.json, { type: 'error', error: { type: 'request_too_large' } }, 'in Anthropic\'s error shape')

  const audio = Buffer.concat([
    Buffer.from('--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n'),
    Buffer.alloc(MiB + 10, 1),
    Buffer.from('\r\n--b--\r\n')
  ])
  t.equal((await post('/v1/audio/transcriptions', audio, { 'content-type': 'multipart/form-data; boundary=b' })).status, 413, 'a multipart upload over the limit is 413')

  // 16 MiB of JSON whitespace compresses to a few KiB; the gateway never inflates request bodies.
  const bomb = gzipSync(Buffer.concat([Buffer.from(chatBody().slice(0, -1)), Buffer.alloc(16 * MiB, 0x20), Buffer.from('}')]))
  t.ok(bomb.length < 100_000, 'the bomb itself is small')
  const gz = await post('/v1/chat/completions', bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
  t.ok(gz.status === 400 || gz.status === 413 || gz.status === 415, `a gzip-encoded body is refused (${gz.status})`)
  t.match(gz.json, { error: { type: 'invalid_request_error' } })

  await nothingSpent(t, app, upstream, store, 'refused bodies')

  const boundary = 'B'.repeat(10_000)
  const longBoundary = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--${boundary}\r\n` +
    `Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFFfake\r\n--${boundary}--\r\n`)
  const started = Date.now()
  const lb = await post('/v1/audio/transcriptions', longBoundary, { 'content-type': `multipart/form-data; boundary=${boundary}` })
  t.ok(Date.now() - started < 2000, 'a long boundary costs no noticeable time')
  t.equal(lb.status, 400, 'a 10 000-character boundary (RFC 2046 allows 70) is 400')
  t.match(lb.json, { error: { type: 'invalid_request_error', code: 'invalid_multipart_boundary' } }, 'in OpenAI\'s error shape')
  const quoted = await post('/v1/audio/transcriptions', longBoundary, { 'content-type': `multipart/form-data; boundary="${boundary}"` })
  t.equal(quoted.status, 400, 'quoted, too')
  await nothingSpent(t, app, upstream, store, 'a long multipart boundary')

  // RFC 2046's longest boundary is served.
  const b70 = 'b'.repeat(70)
  const upload = Buffer.from(`--${b70}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--${b70}\r\n` +
    `Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFFfake\r\n--${b70}--\r\n`)
  const served = await post('/v1/audio/transcriptions', upload, { 'content-type': `multipart/form-data; boundary=${b70}` })
  t.equal(served.status, 200, 'a 70-character boundary is served')
  t.match(served.json, { text: String })


  // The process is healthy and serves the next normal request.
  t.equal((await fetch(`${url}/healthz`)).status, 200)
  const ok = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: chatBody() })
  t.equal(ok.status, 200, 'a normal request still succeeds')
})

t.test('SEC-27 malformed JSON, invalid UTF-8, duplicate routing keys, prototype keys, nesting deeper than 128 and wrong content types are 400 in the caller\'s shape before any reservation; lone surrogates and other duplicate keys are served, never a 500', async (t) => {
  const { app, upstream, store, post } = await setup(t)

  const refused: Array<[string, string, Record<string, string>?]> = [
    ['truncated JSON', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"'],
    ['a bare string', '"gpt-4o-mini"'],
    ['an array', '[1,2,3]'],
    ['JSON with a trailing comma', '{"model":"gpt-4o-mini",}'],
    ['NaN', '{"model":"gpt-4o-mini","temperature":NaN}'],
    ['a form-encoded body', 'model=gpt-4o-mini&messages=hi', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['an octet-stream body', chatBody(), { 'content-type': 'application/octet-stream' }],
    ['XML', '<model>gpt-4o-mini</model>', { 'content-type': 'application/xml' }],
    ['a chat body sent as multipart', chatBody(), { 'content-type': 'multipart/form-data; boundary=x' }]
  ]
  for (const [what, body, headers] of refused) {
    const res = await post('/v1/chat/completions', body, headers)
    t.ok(res.status >= 400 && res.status < 500, `${what}: ${res.status}`)
    t.match(res.json, { error: { message: String, type: 'invalid_request_error' } }, `${what}: OpenAI's error shape`)
  }

  // Prototype keys anywhere in the body are refused, as Fastify's secure-json-parse does.
  const hostile: Array<[string, string]> = [
    ['__proto__', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"__proto__":{"polluted":"yes","role":100}}'],
    ['__proto__ in a message', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi","__proto__":{"polluted":"yes"}}]}'],
    ['__proto__ spelt with escapes', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"\\u005f_proto__":{"polluted":"yes"}}'],
    ['constructor.prototype', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"constructor":{"prototype":{"polluted":"yes"}}}'],
    ['constructor.prototype in a tool', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"constructor":{"prototype":{}}}}}]}']
  ]
  for (const [what, body] of hostile) {
    const res = await post('/v1/chat/completions', body)
    t.equal(res.status, 400, `${what}: 400`)
    t.match(res.json, { error: { type: 'invalid_request_error', code: 'forbidden_json_key' } }, `${what}: OpenAI's error shape`)
    t.equal(({} as Record<string, unknown>)['polluted'], undefined, `${what}: Object.prototype untouched`)
    t.equal(({} as Record<string, unknown>)['role'], undefined, `${what}: no inherited role`)
  }
  const anthropicProto = await post('/v1/messages', '{"model":"gpt-4o-mini","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"__proto__":{"x":1}}', { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' })
  t.equal(anthropicProto.status, 400, '__proto__ on /v1/messages: 400')
  t.match(anthropicProto.json, { type: 'error', error: { type: 'invalid_request_error' } }, 'in Anthropic\'s error shape')
  t.equal((Object.prototype as unknown as Record<string, unknown>)['polluted'], undefined)

  // Nesting deeper than 128 levels is refused in the caller's protocol, whatever the endpoint.
  const nest = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
  const deepChat = await post('/v1/chat/completions', `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${nest(5_000)}}]}`)
  t.equal(deepChat.status, 400, '5 000-deep chat content: 400')
  t.match(deepChat.json, { error: { type: 'invalid_request_error', code: 'json_too_deep' } }, 'in OpenAI\'s error shape')
  const deepAnthropic = await post('/v1/messages', `{"model":"gpt-4o-mini","max_tokens":5,"messages":[{"role":"user","content":${nest(10_000)}}]}`, { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' })
  t.equal(deepAnthropic.status, 400, '10 000-deep Anthropic content: 400')
  t.match(deepAnthropic.json, { type: 'error', error: { type: 'invalid_request_error', message: /nested more than 128 levels/ } }, 'in Anthropic\'s error shape')
  const deepObjects = await post('/v1/chat/completions', `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"metadata":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`)
  t.equal(deepObjects.status, 400, '10 000-deep objects: 400')
  // A tool schema of exactly 128 levels (the body is level 1) is fine; one more level is not.
  const schema = (levels: number): string => levels === 0 ? '{}' : `{"a":${schema(levels - 1)}}`
  const toolBody = (levels: number) => `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema(levels)}}}]}`
  const tooDeepTool = await post('/v1/chat/completions', toolBody(124))
  t.equal(tooDeepTool.status, 400, 'a tool schema reaching level 129: 400')
  t.match(tooDeepTool.json, { error: { code: 'json_too_deep' } })

  // Invalid UTF-8 bytes are refused, never decoded to U+FFFD and sent on, in each protocol's shape.
  const badUtf8 = (prefix: string, suffix: string) => Buffer.concat([Buffer.from(prefix), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from(suffix)])
  const utf = await post('/v1/chat/completions', badUtf8('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"a', 'b"}]}'))
  t.equal(utf.status, 400, 'invalid UTF-8 bytes in a message: 400')
  t.same(utf.json, { error: { message: 'The request body is not valid UTF-8', type: 'invalid_request_error', param: null, code: 'invalid_utf8' } }, 'in OpenAI\'s error shape')
  const overlong = await post('/v1/chat/completions', Buffer.concat([Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}]}')]))
  t.match(overlong, { status: 400, json: { error: { code: 'invalid_utf8' } } }, 'an overlong encoding: 400')
  const utfAnthropic = await post('/v1/messages', badUtf8('{"model":"gpt-4o-mini","max_tokens":5,"messages":[{"role":"user","content":"a', 'b"}]}'), { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' })
  t.same(utfAnthropic, { status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'The request body is not valid UTF-8' } } }, 'on /v1/messages: Anthropic\'s error shape')
  const utfGemini = await post('/v1beta/models/gpt-4o-mini:generateContent', badUtf8('{"contents":[{"role":"user","parts":[{"text":"a', 'b"}]}]}'))
  t.same(utfGemini, { status: 400, json: { error: { code: 400, message: 'The request body is not valid UTF-8', status: 'INVALID_ARGUMENT' } } }, 'on a Gemini path: Google\'s error shape')

  // A routing or billing key twice at the top level is refused, however it is spelt: JSON.parse
  // keeps the last, other parsers the first, so the two could disagree on what is served and billed.
  const duplicates: Array<[string, string, string]> = [
    ['model', '{"model":"whisper-1","model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}', 'model'],
    ['model with spaces before the colon', '{"model" :"whisper-1",\n"model"\t: "gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}', 'model'],
    ['model spelt with an escape', '{"model":"gpt-4o-mini","m\\u006fdel":"whisper-1","messages":[{"role":"user","content":"hi"}]}', 'model'],
    ['stream', '{"model":"gpt-4o-mini","stream":false,"messages":[{"role":"user","content":"hi"}],"stream":true}', 'stream'],
    ['n', '{"model":"gpt-4o-mini","n":1,"n":8,"messages":[{"role":"user","content":"hi"}]}', 'n'],
    ['max_tokens', '{"model":"gpt-4o-mini","max_tokens":1,"messages":[{"role":"user","content":"hi"}],"max_tokens":100000}', 'max_tokens'],
    ['max_completion_tokens', '{"model":"gpt-4o-mini","max_completion_tokens":1,"max_completion_tokens":100000,"messages":[{"role":"user","content":"hi"}]}', 'max_completion_tokens']
  ]
  for (const [what, body, key] of duplicates) {
    const res = await post('/v1/chat/completions', body)
    t.same(res, { status: 400, json: { error: { message: `The request body has the key "${key}" more than once`, type: 'invalid_request_error', param: null, code: 'duplicate_key' } } }, `${what} twice: 400 in OpenAI's shape, naming the key`)
  }
  const dupAnthropic = await post('/v1/messages', '{"model":"gpt-4o-mini","max_tokens":5,"max_tokens":50000,"messages":[{"role":"user","content":"hi"}]}', { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' })
  t.same(dupAnthropic, { status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'The request body has the key "max_tokens" more than once' } } }, 'on /v1/messages: Anthropic\'s error shape')
  const dupGemini = await post('/v1beta/models/gpt-4o-mini:generateContent', '{"model":"a","contents":[{"role":"user","parts":[{"text":"hi"}]}],"model":"b"}')
  t.same(dupGemini, { status: 400, json: { error: { code: 400, message: 'The request body has the key "model" more than once', status: 'INVALID_ARGUMENT' } } }, 'on a Gemini path: Google\'s error shape')
  await nothingSpent(t, app, upstream, store, 'malformed, prototype-keyed, deeply nested, non-UTF-8 and duplicate-keyed bodies')

  t.equal((await post('/v1/chat/completions', toolBody(123))).status, 200, 'a tool schema reaching level 128 is served')
  // Only keys are refused: message text that mentions them goes upstream as sent.
  const mention = 'what do "__proto__" and {"constructor":{"prototype":{}}} do?'
  const text = await post('/v1/chat/completions', chatBody(mention))
  t.equal(text.status, 200, 'a message mentioning __proto__ and constructor.prototype is served')
  t.match(JSON.parse(upstream.requests.at(-1)!.body.toString()), { model: 'gpt-4o-mini', messages: [{ role: 'user', content: mention }] }, 'the upstream gets the message as sent')
  const protoValue = await post('/v1/chat/completions', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi","name":"__proto__"}],"metadata":{"constructor":"x","prototype":"y"}}')
  t.equal(protoValue.status, 200, '__proto__ as a value, constructor with a string value: served')

  // Other keys twice: the last one wins, as JSON.parse has it; routing keys nested deeper are not duplicates.
  const before = upstream.requests.length
  const dup = await post('/v1/chat/completions', '{"model":"gpt-4o-mini","temperature":2,"messages":[{"role":"user","content":"first"}],"temperature":0.5,"messages":[{"role":"user","content":"last"}]}')
  t.equal(dup.status, 200, 'temperature and messages twice: served')
  t.match(JSON.parse(upstream.requests[before]!.body.toString()), { model: 'gpt-4o-mini', temperature: 0.5, messages: [{ role: 'user', content: 'last' }] }, 'the upstream gets the last of each')
  const nested = await post('/v1/chat/completions', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"say \\"model\\": twice \\"model\\":"}],"metadata":{"model":"a","n":1},"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"model":{"type":"string"},"n":{"type":"integer"}}}}}]}')
  t.equal(nested.status, 200, 'model and n as nested keys and inside message text: served')
  t.equal(JSON.parse(upstream.requests[before + 1]!.body.toString()).model, 'gpt-4o-mini')

  // Lone surrogates written as \u escapes are valid JSON: served, and sent upstream still escaped,
  // so what goes upstream is valid UTF-8.
  const lone = await post('/v1/chat/completions', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x\\ud800y\\udfffz"}]}')
  t.equal(lone.status, 200, 'lone surrogates: served')
  t.match(upstream.requests.at(-1)!.body.toString(), /x\\ud800y\\udfffz/, 'and relayed as the same escapes')
  const loneStream = await post('/v1/chat/completions', '{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"x\\ud800y"}]}')
  t.equal(loneStream.status, 200, 'lone surrogates, streamed: served')
  for (const r of upstream.requests.slice(before)) {
    t.ok(Buffer.from(r.body.toString('utf8'), 'utf8').equals(r.body), 'what goes upstream is valid UTF-8')
  }

  // No leaked reservation: each one still open belongs to an admitted request whose usage
  // event is queued (the billing worker settles it), and each of those billed the model it sent.
  const events = await usageEvents(app)
  const billed = new Set(events.map((e) => e.request_id))
  t.ok((await store.openReservations()).every((r) => billed.has(r.requestId)), 'every open reservation has its usage event')
  t.ok(events.length > 0 && events.every((e) => e.model_name === 'gpt-4o-mini' && e.outcome === 'success'), 'every admitted request succeeded with the model it sent')
})

t.test('SEC-28 huge headers and slowloris: oversized headers are 431 in OpenAI\'s shape, head and body timers are set, slow clients do not starve healthy requests and are closed by the timers, long SSE answers are not cut', async (t) => {
  const { app, url, env, upstream, key } = await setup(t)
  const host = new URL(url).host
  const chatReq = (extra: string) => `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(chatBody())}\r\nConnection: close\r\n${extra}\r\n${chatBody()}`

  // Oversized heads: 431 in OpenAI's error shape, and the server closes the socket.
  const huge = await dripping(url, chatReq(`X-Big: ${'a'.repeat(64 * 1024)}\r\n`), '', 1000, 5000)
  t.match(huge.text, /^HTTP\/1\.1 431 /, 'a 64 KiB header is 431')
  t.match(huge.text, /\r\ncontent-type: application\/json/i)
  t.same(rawJson(huge.text), { error: { message: 'The request headers are too large', type: 'invalid_request_error', param: null, code: 'request_header_fields_too_large' } }, 'in OpenAI\'s error shape')
  t.ok(huge.closedAfterMs < 2000, `the server closed the socket (after ${huge.closedAfterMs} ms)`)
  const many = await raw(url, chatReq(Array.from({ length: 1000 }, (_, i) => `X-Pad-${i}: ${'v'.repeat(12)}\r\n`).join('')))
  t.match(many, /^HTTP\/1\.1 431 /, '1 000 headers (about 24 KiB) are 431')
  t.match(rawJson(many), { error: { type: 'invalid_request_error', code: 'request_header_fields_too_large' } }, 'in OpenAI\'s error shape')
  const manySmall = await raw(url, chatReq(Array.from({ length: 1000 }, (_, i) => `x${i}: v\r\n`).join('')))
  t.match(manySmall, /^HTTP\/1\.1 (200|431) /, '1 000 tiny headers are served or refused, never a crash')

  // Node closes connections whose head is incomplete after headersTimeout (checked every
  // connectionsCheckingInterval); both must be within the 60 s budget of the case.
  t.ok(app.server.headersTimeout > 0 && app.server.headersTimeout <= 60_000, `headersTimeout ${app.server.headersTimeout} ms`)
  // The whole request (head and body) must arrive within requestTimeout: 60 s.
  t.equal(app.server.requestTimeout, 60_000, 'requestTimeout is 60 s')
  t.ok(app.server.headersTimeout <= app.server.requestTimeout)

  // 200 slowloris sockets (half a head each) and 200 slow-body sockets stay open while healthy
  // requests are served promptly.
  const sockets: Socket[] = []
  t.teardown(() => { for (const s of sockets) s.destroy() })
  const { hostname, port } = new URL(url)
  for (let i = 0; i < 200; i++) {
    const slowHead = connect(Number(port), hostname, () => { slowHead.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nX-Slow: `) })
    const slowBody = connect(Number(port), hostname, () => {
      slowBody.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`)
    })
    slowHead.on('error', () => {})
    slowBody.on('error', () => {})
    sockets.push(slowHead, slowBody)
  }
  await new Promise((r) => setTimeout(r, 300))
  const times: number[] = []
  for (let i = 0; i < 20; i++) {
    const started = Date.now()
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: chatBody() })
    t.equal(res.status, 200)
    await res.arrayBuffer()
    times.push(Date.now() - started)
  }
  t.ok(Math.max(...times) < 1000, `healthy requests stay fast during the attack (slowest ${Math.max(...times)} ms)`)
  t.equal((await fetch(`${url}/healthz`)).status, 200)
  for (const s of sockets) s.destroy()

  // The timers themselves, on a replica whose requestTimeout is 2 s (the service option; 60 s
  // in production): slow clients are closed, a stream answering for longer is not.
  const short = Fastify(fastifyOptions('gateway', 'silent', { trustRequestId: false, requestTimeoutMs: 2000 }))
  await short.register(gateway, { config: loadGatewayConfig(env) })
  await short.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => short.close())
  const shortUrl = `http://127.0.0.1:${(short.server.address() as { port: number }).port}`
  t.equal(short.server.requestTimeout, 2000)
  t.ok(short.server.headersTimeout <= 2000, `headersTimeout follows it (${short.server.headersTimeout} ms)`)

  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`
  // A body at 1 byte per 500 ms (each byte resets no timer), and a head likewise.
  const [slowBody, slowHead] = await Promise.all([
    dripping(shortUrl, head, '{"model":"gpt-4o-mini","messages":[]}', 500),
    dripping(shortUrl, `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\n`, 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 500)
  ])
  t.ok(slowBody.closedAfterMs >= 1900 && slowBody.closedAfterMs <= 5000, `a slow body is cut by requestTimeout (closed after ${slowBody.closedAfterMs} ms)`)
  t.match(slowBody.text, /^HTTP\/1\.1 408 /, 'with 408')
  t.match(rawJson(slowBody.text), { error: { type: 'invalid_request_error', code: 'request_timeout' } }, 'in OpenAI\'s error shape')
  t.ok(slowHead.closedAfterMs >= 1900 && slowHead.closedAfterMs <= 5000, `a slow head is cut by headersTimeout (closed after ${slowHead.closedAfterMs} ms)`)

  // An answer streaming for about 4.5 s, over twice the request timeout, arrives whole.
  upstream.behaviour.chunks = 30
  upstream.behaviour.chunkDelayMs = 150
  const started = Date.now()
  const sse = await fetch(`${shortUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }) })
  t.equal(sse.status, 200)
  const streamed = await sse.text()
  const took = Date.now() - started
  t.ok(took > 4000, `the stream lasted ${took} ms`)
  t.equal((streamed.match(/word\d+ /g) ?? []).length, 30, 'every chunk arrived')
  t.ok(streamed.trimEnd().endsWith('data: [DONE]'), 'and the stream ended cleanly')
})
