// The cloud channel types through the running gateway with the official clients: AWS Claude
// (type 33, Bedrock: SigV4, AWS event stream) and Vertex AI (type 41, service-account tokens).
// The fake upstreams check the signature and the token as AWS and Google do.
import { createHash, createHmac, generateKeyPairSync, randomBytes, timingSafeEqual, verify } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import t, { type Test } from 'tap'
import { buildGateway, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

interface Received { url: string, headers: IncomingMessage['headers'], body: Buffer }

/** A local server answering with `handle` (after reading the whole request). */
async function serve (t: Test, handle: (req: Received, res: ServerResponse) => void | Promise<void>): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => { void Promise.resolve(handle({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }, res)).catch(() => res.destroy()) })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

// --- Amazon Bedrock -------------------------------------------------------------------------

const AWS = { accessKeyId: 'AKIAGATEWAYTEST00033', secret: 'gatewaySecretKey/33+EXAMPLE', region: 'us-east-1' }
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex')
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest()
const escape = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** AWS Signature Version 4, recomputed from the request as received. */
function signedByAws (req: Received): boolean {
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/bedrock\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(req.headers.authorization ?? '')
  const amzDate = req.headers['x-amz-date']
  if (m === null || m[1] !== AWS.accessKeyId || m[3] !== AWS.region || typeof amzDate !== 'string' || !amzDate.startsWith(m[2]!)) return false
  if (req.headers['x-amz-content-sha256'] !== sha256(req.body)) return false
  const names = m[4]!.split(';')
  const [path = '', query = ''] = req.url.split('?', 2)
  const canonical = [
    'POST',
    path.split('/').map(escape).join('/'),
    query,
    names.map((n) => `${n}:${String(req.headers[n] ?? '').trim()}\n`).join(''),
    m[4],
    sha256(req.body)
  ].join('\n')
  const toSign = ['AWS4-HMAC-SHA256', amzDate, `${m[2]}/${AWS.region}/bedrock/aws4_request`, sha256(canonical)].join('\n')
  const key = hmac(hmac(hmac(hmac(`AWS4${AWS.secret}`, m[2]!), AWS.region), 'bedrock'), 'aws4_request')
  return names.includes('host') && timingSafeEqual(hmac(key, toSign), Buffer.from(m[5]!, 'hex'))
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (buf: Buffer) => {
  let c = 0xffffffff
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b }

/** One AWS event stream message (string headers), framed by hand: lengths, CRCs, headers, payload. */
function eventMessage (headers: Record<string, string>, payload: Buffer): Buffer {
  const head = Buffer.concat(Object.entries(headers).map(([name, value]) => {
    const len = Buffer.alloc(2)
    len.writeUInt16BE(Buffer.byteLength(value))
    return Buffer.concat([Buffer.from([Buffer.byteLength(name)]), Buffer.from(name), Buffer.from([7]), len, Buffer.from(value)])
  }))
  const prelude = Buffer.concat([u32(16 + head.length + payload.length), u32(head.length)])
  const message = Buffer.concat([prelude, u32(crc32(prelude)), head, payload])
  return Buffer.concat([message, u32(crc32(message))])
}
const chunk = (event: unknown) => eventMessage(
  { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
  Buffer.from(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcdefgh' }))
)

const CLAUDE_USAGE = { input_tokens: 20, cache_creation_input_tokens: 30, cache_read_input_tokens: 100 }

async function fakeBedrock (t: Test): Promise<{ url: string, requests: Received[] }> {
  const requests: Received[] = []
  const url = await serve(t, async (req, res) => {
    requests.push(req)
    if (!signedByAws(req)) {
      res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-ErrorType': 'InvalidSignatureException' })
        .end(JSON.stringify({ message: 'The request signature we calculated does not match the signature you provided.' }))
      return
    }
    const body = JSON.parse(req.body.toString()) as Record<string, unknown>
    if (body.anthropic_version !== 'bedrock-2023-05-31' || 'model' in body || 'stream' in body) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Malformed input request' }))
      return
    }
    const model = 'claude-sonnet-4-5-20250929'
    if (req.url.endsWith('/invoke')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        id: 'msg_bdrk_1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'Hello from Bedrock' }],
        stop_reason: 'end_turn', stop_sequence: null, usage: { ...CLAUDE_USAGE, output_tokens: 7 }
      }))
      return
    }
    const events = [
      { type: 'message_start', message: { id: 'msg_bdrk_2', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...CLAUDE_USAGE, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'from Bedrock' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } },
      { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 20, outputTokenCount: 7, invocationLatency: 900, firstByteLatency: 200, cacheReadInputTokenCount: 100, cacheWriteInputTokenCount: 30 } }
    ]
    const bytes = Buffer.concat(events.map(chunk))
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' })
    // Cut across messages, as TCP delivers them.
    for (let at = 0; at < bytes.length; at += 97) {
      res.write(bytes.subarray(at, at + 97))
      await new Promise((resolve) => setImmediate(resolve))
    }
    res.end()
  })
  return { url, requests }
}

// --- Vertex AI --------------------------------------------------------------------------------

const PROJECT = 'gateway-test-41'
const EMAIL = 'relay@gateway-test-41.iam.gserviceaccount.com'
const GEMINI_USAGE = { promptTokenCount: 12, candidatesTokenCount: 5, thoughtsTokenCount: 3, cachedContentTokenCount: 4, totalTokenCount: 20 }

async function fakeVertex (t: Test): Promise<{ url: string, key: string, exchanges: () => number, requests: Received[] }> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const issued = new Set<string>()
  const requests: Received[] = []
  let exchanges = 0
  let origin = ''
  const url = await serve(t, async (req, res) => {
    if (req.url === '/token') {
      const assertion = new URLSearchParams(req.body.toString()).get('assertion') ?? ''
      const [head = '', claims = '', signature = ''] = assertion.split('.')
      const body = JSON.parse(Buffer.from(claims, 'base64url').toString() || '{}') as Record<string, unknown>
      if (!verify('RSA-SHA256', Buffer.from(`${head}.${claims}`), publicKey, Buffer.from(signature, 'base64url')) || body.iss !== EMAIL || body.aud !== `${origin}/token`) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant', error_description: 'Invalid JWT Signature.' }))
        return
      }
      exchanges++
      const token = `ya29.${randomBytes(16).toString('hex')}`
      issued.add(token)
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, expires_in: 3599, token_type: 'Bearer' }))
      return
    }
    requests.push(req)
    if (!issued.has(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '')) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } }))
      return
    }
    const base = `/v1/projects/${PROJECT}/locations/us-central1/publishers/google/models/gemini-2.5-flash`
    if (req.url === `${base}:generateContent`) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        candidates: [{ content: { role: 'model', parts: [{ text: 'Hello from Vertex' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: GEMINI_USAGE, modelVersion: 'gemini-2.5-flash'
      }))
      return
    }
    if (req.url === `${base}:streamGenerateContent?alt=sse`) {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(`data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hello ' }] }, index: 0 }], usageMetadata: { promptTokenCount: 12 } })}\r\n\r\n`)
      res.end(`data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'from Vertex' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: GEMINI_USAGE })}\r\n\r\n`)
      return
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 404, message: `no ${req.url}`, status: 'NOT_FOUND' } }))
  })
  origin = url
  const key = JSON.stringify({
    type: 'service_account', project_id: PROJECT, private_key_id: 'k1', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: EMAIL, token_uri: `${url}/token`
  })
  return { url, key, exchanges: () => exchanges, requests }
}

t.test('OpenAI and Anthropic clients through AWS Claude and Vertex AI channels, billed on the upstreams\' usage', async (t) => {
  const { app, url } = await buildGateway(t)
  const bedrock = await fakeBedrock(t)
  const vertex = await fakeVertex(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { type: 33, baseUrl: bedrock.url, key: `${AWS.accessKeyId}|${AWS.secret}|${AWS.region}`, models: ['claude-sonnet-4-5'] })
  const vertexChannel = await seedChannel(app.db, { type: 41, baseUrl: vertex.url, key: vertex.key, models: ['gemini-2.5-flash'] })
  await app.db.updateTable('channels').set({ other: 'us-central1' }).where('id', '=', vertexChannel.id).execute()
  await reload(app)
  const openai = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })

  // AWS Claude, OpenAI client.
  const chat = await openai.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] })
  t.equal(chat.choices[0]?.message.content, 'Hello from Bedrock')
  t.match(chat.usage, { prompt_tokens: 150, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 100 } })
  t.equal(bedrock.requests[0]?.url, '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke', 'the Bedrock id with the region\'s inference profile')
  t.match(JSON.parse(bedrock.requests[0]!.body.toString()), { anthropic_version: 'bedrock-2023-05-31', system: [{ type: 'text', text: 'Be brief.' }] })
  let text = ''
  let usage: OpenAI.CompletionUsage | undefined
  for await (const part of await openai.chat.completions.create({ model: 'claude-sonnet-4-5', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] })) {
    text += part.choices[0]?.delta.content ?? ''
    if (part.usage) usage = part.usage
  }
  t.equal(text, 'Hello from Bedrock')
  t.match(usage, { prompt_tokens: 150, completion_tokens: 7 })
  t.equal(bedrock.requests[1]?.url, '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream')

  // AWS Claude, Anthropic client: passed through.
  const anthropic = new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 })
  const message = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
  t.match(message, { id: 'msg_bdrk_1', stop_reason: 'end_turn', content: [{ type: 'text', text: 'Hello from Bedrock' }], usage: CLAUDE_USAGE })
  t.same(JSON.parse(bedrock.requests[2]!.body.toString()), { anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }, 'the client\'s body as written')
  const deltas: string[] = []
  const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
  stream.on('text', (delta) => { deltas.push(delta) })
  const final = await stream.finalMessage()
  t.same(deltas, ['Hello ', 'from Bedrock'], 'Bedrock\'s events as Anthropic server-sent events')
  t.match(final, { id: 'msg_bdrk_2', stop_reason: 'end_turn', usage: { ...CLAUDE_USAGE, output_tokens: 7 } })

  // Vertex AI, OpenAI client: one token exchange for both requests.
  const gemini = await openai.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] })
  t.equal(gemini.choices[0]?.message.content, 'Hello from Vertex')
  t.match(gemini.usage, { prompt_tokens: 12, completion_tokens: 8, completion_tokens_details: { reasoning_tokens: 3 } })
  text = ''
  usage = undefined
  for await (const part of await openai.chat.completions.create({ model: 'gemini-2.5-flash', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] })) {
    text += part.choices[0]?.delta.content ?? ''
    if (part.usage) usage = part.usage
  }
  t.equal(text, 'Hello from Vertex')
  t.match(usage, { prompt_tokens: 12, completion_tokens: 8 })
  t.equal(vertex.exchanges(), 1, 'the access token was obtained once and reused')
  t.equal(vertex.requests.length, 2)

  const events = await usageEvents(app)
  t.equal(events.length, 6)
  const of = (model: string, stream: boolean) => events.filter((e) => e.model_name === model && e.is_stream === stream)
  for (const stream of [false, true]) {
    const claude = of('claude-sonnet-4-5', stream)
    t.equal(claude.length, 2, `two ${stream ? 'streamed' : 'plain'} AWS Claude requests`)
    for (const e of claude) t.match(e, { prompt_tokens: 150, completion_tokens: 7, cached_tokens: 100, cache_write_tokens: 30, usage_source: 'upstream', outcome: 'success' })
    t.match(of('gemini-2.5-flash', stream), [{ prompt_tokens: 12, completion_tokens: 8, cached_tokens: 4, usage_source: 'upstream', outcome: 'success' }])
  }
})

t.test('an AWS Claude channel with a wrong secret is refused by the signature check and disabled', async (t) => {
  const { app, url } = await buildGateway(t)
  const bedrock = await fakeBedrock(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const ch = await seedChannel(app.db, { type: 33, baseUrl: bedrock.url, key: `${AWS.accessKeyId}|wrong-secret|${AWS.region}`, models: ['claude-sonnet-4-5'] })
  await reload(app)
  const err = await new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] })
    .then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof OpenAI.APIError)
  t.equal(bedrock.requests.length, 1)
  const row = await app.db.selectFrom('channels').select('status').where('id', '=', ch.id).executeTakeFirstOrThrow()
  t.equal(row.status, 3, 'auto-disabled on InvalidSignatureException')
})
