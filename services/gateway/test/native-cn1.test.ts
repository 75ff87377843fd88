// OpenAI clients through the gateway to Baidu (ERNIE), PaLM 2, ChatGLM and GLM-4V channels: local
// servers speaking each provider's own protocol (Baidu's access token exchange and HTTP-200
// errors, PaLM's unstreamed answers without usage, Zhipu's JWT), usage billed exactly.
import { createHmac } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import OpenAI, { APIError } from 'openai'
import t, { type Test } from 'tap'
import { exactCounter } from '../src/relay/estimate.js'
import { buildGateway, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

interface Seen { path: string, query: URLSearchParams, headers: IncomingMessage['headers'], body: Record<string, unknown> }
type Handler = (seen: Seen, res: ServerResponse) => void

/** A local HTTP server; `handle` answers every request (tests swap it). */
async function upstream (t: Test, handle: Handler): Promise<{ url: string, seen: Seen[], handle: Handler }> {
  const state = { url: '', seen: [] as Seen[], handle }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x')
      let body: Record<string, unknown>
      try { body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown> } catch { body = {} }
      const seen = { path: url.pathname, query: url.searchParams, headers: req.headers, body }
      state.seen.push(seen)
      state.handle(seen, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return state
}

const sendJson = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

async function setup (t: Test, ratios: Record<string, number>) {
  const { app, url } = await buildGateway(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values([
    { key: 'ModelRatio', value: JSON.stringify(ratios) },
    { key: 'CompletionRatio', value: JSON.stringify(Object.fromEntries(Object.keys(ratios).map((m) => [m, 2]))) }
  ]).execute()
  return { app, openai: new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 }) }
}

async function collect (stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let text = ''
  let usage: OpenAI.CompletionUsage | undefined
  let finish: string | null = null
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? ''
    finish = chunk.choices[0]?.finish_reason ?? finish
    if (chunk.usage != null) usage = chunk.usage
  }
  return { text, usage, finish }
}

t.test('Baidu: an access token from API_KEY|SECRET_KEY, ERNIE answers streamed and not, errors sent with HTTP 200', async (t) => {
  const { app, openai } = await setup(t, { 'ERNIE-4.0-8K': 1, 'Embedding-V1': 0.1 })
  const tokens: string[] = []
  const revoked = new Set<string>()
  let error: { error_code: number, error_msg: string } | undefined
  const usage = { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 }
  const baidu = await upstream(t, (seen, res) => {
    if (seen.path === '/oauth/2.0/token') {
      if (seen.query.get('client_id') !== 'ak-1' || seen.query.get('client_secret') !== 'sk-1') {
        sendJson(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' })
        return
      }
      tokens.push(`24.token-${tokens.length + 1}`)
      sendJson(res, 200, { access_token: tokens.at(-1), expires_in: 2592000 })
      return
    }
    const token = seen.query.get('access_token') ?? ''
    if (!tokens.includes(token) || revoked.has(token)) {
      sendJson(res, 200, { error_code: 110, error_msg: 'Access token invalid or no longer valid' })
      return
    }
    if (error !== undefined) {
      sendJson(res, 200, error)
      return
    }
    if (seen.path.endsWith('/embeddings/embedding-v1')) {
      sendJson(res, 200, { id: 'as-e', object: 'embedding_list', created: 1, data: [{ object: 'embedding', index: 0, embedding: [0.25, -0.5] }], usage: { prompt_tokens: 2, total_tokens: 2 } })
      return
    }
    if (seen.path !== '/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions_pro') {
      sendJson(res, 200, { error_code: 336005, error_msg: 'API name not exist' })
      return
    }
    if (seen.body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(`data: ${JSON.stringify({ id: 'as-2', object: 'chat.completion', created: 1, sentence_id: 0, is_end: false, result: '你好，', usage: { prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 } })}\n\n`)
      res.end(`data: ${JSON.stringify({ id: 'as-2', object: 'chat.completion', created: 1, sentence_id: 1, is_end: true, result: '世界', finish_reason: 'normal', usage })}\n\n`)
      return
    }
    sendJson(res, 200, { id: 'as-1', object: 'chat.completion', created: 1, result: 'Hello from ERNIE', is_truncated: false, need_clear_history: false, finish_reason: 'normal', usage })
  })
  const channel = await seedChannel(app.db, { type: 15, baseUrl: baidu.url, key: 'ak-1|sk-1', models: ['ERNIE-4.0-8K', 'Embedding-V1'] })
  await reload(app)

  const answer = await openai.chat.completions.create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }], max_tokens: 50 })
  t.equal(answer.choices[0]?.message.content, 'Hello from ERNIE')
  t.equal(answer.choices[0]?.finish_reason, 'stop')
  t.match(answer.usage, { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 })
  t.match(baidu.seen.at(-1)?.body, { system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }], max_output_tokens: 50 }, 'an ERNIE request')

  const streamed = await collect(await openai.chat.completions.create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }))
  t.same(streamed, { text: '你好，世界', usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 }, finish: 'stop' })

  const embedding = await openai.embeddings.create({ model: 'Embedding-V1', input: 'hi' })
  t.same(embedding.data[0]?.embedding, [0.25, -0.5], 'the SDK\'s default base64 encoding, decoded')
  t.equal(tokens.length, 1, 'one token exchange for every request')

  // Baidu's errors come with HTTP 200: the client's fault is answered as such, never as a completion.
  error = { error_code: 336003, error_msg: 'the first message must be user' }
  const refused = await openai.chat.completions.create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
  t.ok(refused instanceof APIError && refused.status === 400, 'a 400 for the client')
  t.match((refused as APIError).message, /the first message must be user \(Baidu error 336003\)/)
  const refusedStream = await openai.chat.completions.create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'user', content: 'hi' }], stream: true }).catch((e: unknown) => e)
  t.ok(refusedStream instanceof APIError && refusedStream.status === 400, 'a refused stream too')
  error = undefined

  // A token Baidu stops accepting is dropped: that request fails over (no other channel here), the next one gets a new token.
  revoked.add(tokens[0] ?? '')
  const dropped = await openai.chat.completions.create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
  t.ok(dropped instanceof APIError && dropped.status >= 500, `retried elsewhere, none left (${(dropped as APIError).status})`)
  t.equal((await openai.chat.completions.create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'user', content: 'hi' }] })).choices[0]?.message.content, 'Hello from ERNIE')
  t.equal(tokens.length, 2, 'a new token was obtained')
  t.equal((await app.db.selectFrom('channels').select('status').where('id', '=', channel.id).executeTakeFirstOrThrow()).status, 1, 'the channel stays enabled')

  // An exhausted account (error 17, daily limit) disables the channel.
  error = { error_code: 17, error_msg: 'Open api daily request limit reached' }
  await openai.chat.completions.create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined)
  t.equal((await app.db.selectFrom('channels').select('status').where('id', '=', channel.id).executeTakeFirstOrThrow()).status, 3, 'auto-disabled')

  const events = await usageEvents(app)
  const ok = events.filter((e) => e.outcome === 'success')
  // Events come in the order requests ended; compare them sorted.
  t.same(ok.map((e) => [e.model_name, e.is_stream, e.prompt_tokens, e.completion_tokens, e.usage_source].join(' ')).sort(), [
    'ERNIE-4.0-8K false 9 5 upstream',
    'ERNIE-4.0-8K false 9 5 upstream',
    'ERNIE-4.0-8K true 9 5 upstream',
    'Embedding-V1 false 2 0 upstream'
  ])
  t.ok(ok.every((e) => e.quota > 0))
  const failed = events.filter((e) => e.outcome === 'failed')
  t.equal(failed.length, 4, 'the refusals bill nothing')
  t.ok(failed.every((e) => e.quota === 0 && e.prompt_tokens === 0))
  t.equal(failed.filter((e) => e.error?.status === 400 && /Baidu error 336003/.test(e.error.message)).length, 2, 'the client\'s refusals name Baidu\'s error')
})

t.test('PaLM 2: converted both ways, a streamed request answered as events, the tokens counted by the gateway', async (t) => {
  const { app, openai } = await setup(t, { 'chat-bison-001': 0.25 })
  const palm = await upstream(t, (seen, res) => {
    if (seen.headers['x-goog-api-key'] !== 'AIza-palm') {
      sendJson(res, 400, { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }] } })
      return
    }
    sendJson(res, 200, { candidates: [{ author: '1', content: 'Hello from PaLM, twice over.' }], messages: [{ author: '0', content: 'hi' }] })
  })
  await seedChannel(app.db, { type: 11, baseUrl: palm.url, key: 'AIza-palm', models: ['chat-bison-001'] })
  await reload(app)

  const answer = await openai.chat.completions.create({ model: 'chat-bison-001', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] })
  t.equal(answer.choices[0]?.message.content, 'Hello from PaLM, twice over.')
  t.equal(answer.usage, undefined, 'PaLM reports no usage')
  t.match(palm.seen[0], { path: '/v1beta2/models/chat-bison-001:generateMessage', body: { prompt: { context: 'Be brief.', messages: [{ author: '0', content: 'hi' }] } } })

  const res = await openai.chat.completions.create({ model: 'chat-bison-001', messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse()
  t.match(res.response.headers.get('content-type'), /text\/event-stream/, 'an OpenAI streaming client gets events')
  t.same(await collect(res.data), { text: 'Hello from PaLM, twice over.', usage: undefined, finish: 'stop' })
  t.equal(palm.seen[1]?.path, '/v1beta2/models/chat-bison-001:generateMessage', 'the same unstreamed method')

  const count = await exactCounter()
  const events = await usageEvents(app)
  t.equal(events.length, 2)
  for (const e of events) {
    t.match(e, { outcome: 'success', usage_source: 'counted', completion_tokens: count('Hello from PaLM, twice over.') })
    t.ok(e.prompt_tokens > 0 && e.quota > 0)
    t.not(e.usage_source, 'upstream')
  }
  t.same(events.map((e) => e.is_stream).sort(), [false, true])
})

t.test('ChatGLM and GLM-4V: a JWT signed with the key\'s secret, OpenAI-shaped answers with their usage', async (t) => {
  const { app, openai } = await setup(t, { 'glm-4-plus': 0.5, 'glm-4v-plus': 0.5 })
  const usage = { prompt_tokens: 20, completion_tokens: 6, total_tokens: 26, prompt_tokens_details: { cached_tokens: 8 } }
  const verified: Array<Record<string, unknown>> = []
  const zhipu = await upstream(t, (seen, res) => {
    // HS256 recomputed with the secret of the key the request claims (api_key).
    const [head = '', payload = '', signature = ''] = String(seen.headers.authorization ?? '').replace(/^Bearer /, '').split('.')
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString() || '{}') as Record<string, unknown>
    const secret = ({ 'glm-id': 'glm-secret', 'glm4v-id': 'glm4v-secret' } as Record<string, string>)[String(claims.api_key)] ?? ''
    const expected = createHmac('sha256', secret).update(`${head}.${payload}`).digest('base64url')
    const header = JSON.parse(Buffer.from(head, 'base64url').toString() || '{}') as Record<string, unknown>
    const now = Date.now()
    if (secret === '' || signature !== expected || header.alg !== 'HS256' || header.sign_type !== 'SIGN' ||
      !(Number(claims.exp) > now && Number(claims.timestamp) <= now && Number(claims.timestamp) > now - 60_000)) {
      sendJson(res, 401, { error: { code: '1002', message: 'Authorization Token非法，请确认Authorization Token正确传递。' } })
      return
    }
    verified.push(claims)
    const model = String(seen.body.model)
    if (seen.body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      for (const delta of ['Hello ', 'from ', 'GLM']) res.write(`data: ${JSON.stringify({ id: 'z2', created: 1, model, choices: [{ index: 0, delta: { role: 'assistant', content: delta } }] })}\n\n`)
      res.write(`data: ${JSON.stringify({ id: 'z2', created: 1, model, choices: [{ index: 0, finish_reason: 'stop', delta: { role: 'assistant', content: '' } }], usage })}\n\n`)
      res.end('data: [DONE]\n\n')
      return
    }
    sendJson(res, 200, { id: 'z1', created: 1, model, request_id: 'r1', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hello from GLM' } }], usage })
  })
  await seedChannel(app.db, { type: 16, baseUrl: zhipu.url, key: 'glm-id.glm-secret', models: ['glm-4-plus'] })
  await seedChannel(app.db, { type: 26, baseUrl: zhipu.url, key: 'glm4v-id.glm4v-secret', models: ['glm-4v-plus'] })
  await reload(app)

  for (const model of ['glm-4-plus', 'glm-4v-plus']) {
    const content: OpenAI.Chat.Completions.ChatCompletionContentPart[] = model === 'glm-4v-plus'
      ? [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }]
      : [{ type: 'text', text: 'hi' }]
    const answer = await openai.chat.completions.create({ model, messages: [{ role: 'user', content }] })
    t.equal(answer.choices[0]?.message.content, 'Hello from GLM', model)
    t.match(answer.usage, { prompt_tokens: 20, completion_tokens: 6 })
    const streamed = await collect(await openai.chat.completions.create({ model, messages: [{ role: 'user', content }], stream: true, stream_options: { include_usage: true } }))
    t.match(streamed, { text: 'Hello from GLM', finish: 'stop', usage: { prompt_tokens: 20, completion_tokens: 6 } }, `${model} streamed`)
  }
  t.equal(zhipu.seen.length, 4)
  t.match(zhipu.seen[2]?.body, { messages: [{ content: [{ type: 'text' }, { type: 'image_url', image_url: { url: 'iVBORw0KGgo=' } }] }] }, 'GLM-4V gets the bare base64')
  t.same(verified.map((c) => c.api_key), ['glm-id', 'glm-id', 'glm4v-id', 'glm4v-id'], 'every request carried a valid JWT')

  const events = await usageEvents(app)
  t.equal(events.length, 4)
  for (const e of events) t.match(e, { outcome: 'success', usage_source: 'upstream', prompt_tokens: 20, cached_tokens: 8, completion_tokens: 6 })
  t.same(events.map((e) => `${e.model_name} ${String(e.is_stream)}`).sort(), ['glm-4-plus false', 'glm-4-plus true', 'glm-4v-plus false', 'glm-4v-plus true'])
})
