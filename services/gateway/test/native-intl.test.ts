// The official OpenAI client through the gateway to channels of Cohere (34), MiniMax (35), Jina
// (38) and Cloudflare Workers AI (39): one local server speaking each protocol (keys checked as
// each provider does), chat streamed and not, embeddings, rerank, the usage events carrying the
// upstreams' exact tokens, and errors MiniMax reports with HTTP 200 handled as refusals.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import OpenAI from 'openai'
import t, { type Test } from 'tap'
import { buildGateway, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

const COHERE_KEY = 'co-gateway-key'
const MINIMAX_KEY = 'mm-gateway-key'
const JINA_KEY = 'jina_gateway_key'
const CF_TOKEN = 'cf-gateway-token'
const CF_ACCOUNT = 'aaaabbbbccccddddeeeeffff00001111'
const CF_PREFIX = `/client/v4/accounts/${CF_ACCOUNT}/ai/v1`

interface Seen { path: string, headers: IncomingHttpHeaders, body: Record<string, unknown> }

const json = (res: ServerResponse, status: number, body: unknown) => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)) }
const sse = (res: ServerResponse, events: string[]) => { res.writeHead(200, { 'content-type': 'text/event-stream' }).end(events.join('')) }
const bearer = (seen: Seen, key: string) => seen.headers.authorization === `Bearer ${key}`

function cohere (res: ServerResponse, seen: Seen): void {
  if (!bearer(seen, COHERE_KEY)) return json(res, 401, { id: 'e0', message: 'invalid api token' })
  const body = seen.body
  if (seen.path === '/v2/embed') {
    const texts = body.texts as string[]
    return json(res, 200, { id: 'emb', embeddings: { float: texts.map((_, i) => [0.25, i]) }, texts, meta: { billed_units: { input_tokens: 5 } }, response_type: 'embeddings_by_type' })
  }
  if (seen.path === '/v2/rerank') {
    return json(res, 200, { id: 'rr', results: [{ index: 1, relevance_score: 0.9 }, { index: 0, relevance_score: 0.1 }], meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } })
  }
  const usage = { billed_units: { input_tokens: 12, output_tokens: 7 }, tokens: { input_tokens: 250, output_tokens: 7 }, cached_tokens: 4 }
  if (body.stream !== true) {
    return json(res, 200, { id: 'co1', finish_reason: 'COMPLETE', message: { role: 'assistant', content: [{ type: 'text', text: 'Hello from Cohere' }] }, usage })
  }
  const event = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`
  const delta = (text: string) => event({ type: 'content-delta', index: 0, delta: { message: { content: { text } } } })
  sse(res, [
    event({ type: 'message-start', id: 'co2', delta: { message: { role: 'assistant' } } }),
    event({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } }),
    delta('Hello '), delta('from Cohere'),
    event({ type: 'content-end', index: 0 }),
    event({ type: 'message-end', delta: { finish_reason: 'COMPLETE', usage } })
  ])
}

function minimax (res: ServerResponse, seen: Seen): void {
  const error = (code: number, msg: string) => json(res, 200, { id: '', choices: null, usage: null, base_resp: { status_code: code, status_msg: msg } })
  if (!bearer(seen, MINIMAX_KEY)) return error(1004, 'login fail: Please carry the API secret key in the Authorization field')
  const body = seen.body as { stream?: boolean, messages: Array<{ content: string }> }
  if (body.messages.at(-1)?.content === 'bad') return error(2013, 'invalid params, messages is empty')
  const usage = { total_tokens: 19, prompt_tokens: 12, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 4 } }
  const whole = { role: 'assistant', content: '<think>\nA greeting.\n</think>\n\nHello from MiniMax' }
  const base = { id: 'mm1', created: 1_700_000_000, model: 'MiniMax-M2', input_sensitive: false, output_sensitive: false, base_resp: { status_code: 0, status_msg: '' } }
  if (body.stream !== true) return json(res, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: whole }], usage })
  const chunk = (content: string) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content } }] })}\n\n`
  sse(res, [
    chunk('<think>\nA gree'), chunk('ting.\n</th'), chunk('ink>\n\nHello '), chunk('from MiniMax'),
    `data: ${JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: whole }], usage })}\n\n`
  ])
}

function jina (res: ServerResponse, seen: Seen): void {
  if (!bearer(seen, JINA_KEY)) return json(res, 401, { detail: 'Invalid API key', code: 'AUTH_INVALID_API_KEY' })
  if ('encoding_format' in seen.body) return json(res, 422, { detail: [{ type: 'extra_forbidden', loc: ['body', 'encoding_format'], msg: 'Extra inputs are not permitted' }] })
  if (seen.path === '/v1/rerank') {
    return json(res, 200, { model: seen.body.model, usage: { total_tokens: 17 }, results: [{ index: 0, relevance_score: 0.8, document: { text: 'Paris' } }] })
  }
  const input = seen.body.input as string[]
  json(res, 200, { model: seen.body.model, object: 'list', usage: { total_tokens: 9, prompt_tokens: 9 }, data: input.map((_, index) => ({ object: 'embedding', index, embedding: [0.5, -index] })) })
}

function cloudflare (res: ServerResponse, seen: Seen): void {
  if (!bearer(seen, CF_TOKEN)) return json(res, 401, { success: false, errors: [{ code: 10000, message: 'Authentication error' }], messages: [], result: null })
  const usage = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }
  if (seen.path === `${CF_PREFIX}/embeddings`) {
    return json(res, 200, { object: 'list', model: seen.body.model, data: [{ object: 'embedding', index: 0, embedding: [0.75, 0.5] }], usage: { prompt_tokens: 3, total_tokens: 3 } })
  }
  const base = { id: 'cf1', created: 1_700_000_000, model: seen.body.model }
  if (seen.body.stream !== true) {
    return json(res, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from Workers AI' }, finish_reason: 'stop' }], usage })
  }
  const chunk = (fields: Record<string, unknown>) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...fields })}\n\n`
  const includeUsage = (seen.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true
  sse(res, [
    chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello ' }, finish_reason: null }] }),
    chunk({ choices: [{ index: 0, delta: { content: 'from Workers AI' }, finish_reason: null }] }),
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    ...(includeUsage ? [chunk({ choices: [], usage })] : []),
    'data: [DONE]\n\n'
  ])
}

/** One local server for the four protocols, told apart by path. */
async function upstreams (t: Test): Promise<{ url: string, seen: Seen[] }> {
  const seen: Seen[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const entry: Seen = { path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown> }
      seen.push(entry)
      if (entry.path.startsWith('/v2/')) cohere(res, entry)
      else if (entry.path === '/v1/text/chatcompletion_v2') minimax(res, entry)
      else if (entry.path === '/v1/embeddings' || entry.path === '/v1/rerank') jina(res, entry)
      else if (entry.path.startsWith(CF_PREFIX)) cloudflare(res, entry)
      else json(res, 404, { message: 'no route' })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

const CHAT = [
  { model: 'command-a-03-2025', text: 'Hello from Cohere', cached: 4 },
  { model: 'MiniMax-M2', text: 'Hello from MiniMax', cached: 3 },
  { model: '@cf/meta/llama-3.3-70b-instruct-fp8-fast', text: 'Hello from Workers AI', cached: 0 }
]
const EMBEDDINGS = [
  { model: 'embed-v4.0', vectors: [[0.25, 0], [0.25, 1]], tokens: 5 },
  { model: 'jina-embeddings-v3', vectors: [[0.5, 0], [0.5, -1]], tokens: 9 },
  { model: '@cf/baai/bge-m3', vectors: [[0.75, 0.5]], tokens: 3 }
]
const RERANK = [
  { model: 'rerank-v3.5', tokens: 1 },
  { model: 'jina-reranker-v2-base-multilingual', tokens: 17 }
]

t.test('OpenAI clients through Cohere, MiniMax, Jina and Cloudflare channels: chat, embeddings and rerank billed on the upstreams\' tokens', async (t) => {
  const { app, url } = await buildGateway(t)
  const up = await upstreams(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const models = [...CHAT, ...EMBEDDINGS, ...RERANK].map((m) => m.model)
  await app.db.insertInto('options').values({ key: 'ModelRatio', value: JSON.stringify(Object.fromEntries(models.map((m) => [m, 0.5]))) }).execute()
  await seedChannel(app.db, { type: 34, baseUrl: up.url, key: COHERE_KEY, models: ['command-a-03-2025', 'embed-v4.0', 'rerank-v3.5'], name: 'cohere' })
  await seedChannel(app.db, { type: 35, baseUrl: up.url, key: MINIMAX_KEY, models: ['MiniMax-M2'], name: 'minimax' })
  await seedChannel(app.db, { type: 38, baseUrl: up.url, key: JINA_KEY, models: ['jina-embeddings-v3', 'jina-reranker-v2-base-multilingual'], name: 'jina' })
  const cf = await seedChannel(app.db, { type: 39, baseUrl: up.url, key: CF_TOKEN, models: ['@cf/meta/llama-3.3-70b-instruct-fp8-fast', '@cf/baai/bge-m3'], name: 'cloudflare' })
  await app.db.updateTable('channels').set({ other: CF_ACCOUNT }).where('id', '=', cf.id).execute()
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })

  for (const { model, text, cached } of CHAT) {
    const answer = await client.chat.completions.create({ model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] })
    t.equal(answer.choices[0]?.message.content, text, `${model}: answered`)
    t.equal(answer.choices[0]?.finish_reason, 'stop')
    t.match(answer.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })
    if (cached > 0) t.equal(answer.usage?.prompt_tokens_details?.cached_tokens, cached, `${model}: cached tokens`)

    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
    let streamed = ''
    let reasoning = ''
    let finish: string | null | undefined
    let usage: OpenAI.CompletionUsage | undefined
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string | null, reasoning_content?: string } | undefined
      streamed += delta?.content ?? ''
      reasoning += delta?.reasoning_content ?? ''
      finish = chunk.choices[0]?.finish_reason ?? finish
      usage = chunk.usage ?? usage
    }
    t.equal(streamed, text, `${model}: streamed`)
    t.equal(finish, 'stop')
    t.match(usage, { prompt_tokens: 12, completion_tokens: 7 })
    if (model === 'MiniMax-M2') {
      t.equal(reasoning, 'A greeting.\n', 'MiniMax\'s <think> block streamed as reasoning_content')
      t.equal((answer.choices[0]?.message as { reasoning_content?: string }).reasoning_content, 'A greeting.\n', 'and as reasoning_content of the answer')
    }
  }
  const cohereChat = up.seen.find((s) => s.path === '/v2/chat')
  t.same(cohereChat?.body.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }], 'Cohere got its own chat request')
  t.ok(up.seen.some((s) => s.path === `${CF_PREFIX}/chat/completions`), 'Workers AI under the channel\'s account')

  for (const { model, vectors, tokens } of EMBEDDINGS) {
    const embedded = await client.embeddings.create({ model, input: vectors.length === 1 ? 'a' : ['a', 'b'] })
    t.same(embedded.data.map((d) => d.embedding), vectors, `${model}: vectors decoded from the base64 the SDK asks for`)
    t.equal(embedded.usage.prompt_tokens, tokens)
  }

  for (const { model } of RERANK) {
    const res = await fetch(`${url}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, query: 'capital of France', documents: ['Paris', 'Berlin'], top_n: 2 })
    })
    t.equal(res.status, 200, `${model}: reranked`)
    const ranked = await res.json() as { results: Array<{ index: number, relevance_score: number }> }
    t.match(ranked.results[0], { index: Number, relevance_score: Number })
  }
  t.same(up.seen.find((s) => s.path === '/v2/rerank')?.body, { model: 'rerank-v3.5', query: 'capital of France', documents: ['Paris', 'Berlin'], top_n: 2 })

  const events = await usageEvents(app)
  t.equal(events.length, CHAT.length * 2 + EMBEDDINGS.length + RERANK.length)
  for (const { model, cached } of CHAT) {
    const mine = events.filter((e) => e.model_name === model)
    t.same(mine.map((e) => e.is_stream).sort(), [false, true], `${model}: one event each`)
    for (const e of mine) t.match(e, { prompt_tokens: 12, completion_tokens: 7, cached_tokens: cached, usage_source: 'upstream', outcome: 'success' }, `${model}: the upstream's tokens`)
  }
  for (const { model, tokens } of [...EMBEDDINGS, ...RERANK]) {
    t.match(events.find((e) => e.model_name === model), { prompt_tokens: tokens, completion_tokens: 0, cached_tokens: 0, usage_source: 'upstream', outcome: 'success' }, `${model}: the upstream's count`)
  }
})

t.test('refusals: MiniMax errors in 200 answers, a Cloudflare channel without its account ID, a wrong Jina key', async (t) => {
  const { app, url } = await buildGateway(t)
  const up = await upstreams(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values({ key: 'ModelRatio', value: JSON.stringify({ 'MiniMax-M2': 0.5, 'MiniMax-M2.5': 0.5, '@cf/qwen/qwq-32b': 0.5, 'jina-embeddings-v3': 0.01 }) }).execute()
  const good = await seedChannel(app.db, { type: 35, baseUrl: up.url, key: MINIMAX_KEY, models: ['MiniMax-M2'] })
  const wrong = await seedChannel(app.db, { type: 35, baseUrl: up.url, key: 'mm-revoked', models: ['MiniMax-M2.5'] })
  const noAccount = await seedChannel(app.db, { type: 39, baseUrl: up.url, key: CF_TOKEN, models: ['@cf/qwen/qwq-32b'] })
  const badJina = await seedChannel(app.db, { type: 38, baseUrl: up.url, key: 'jina_wrong', models: ['jina-embeddings-v3'] })
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const ask = async (model: string, content = 'hi', stream = false) =>
    await client.chat.completions.create({ model, messages: [{ role: 'user', content }], stream }).then(() => undefined, (err: unknown) => err)

  const invalid = await ask('MiniMax-M2', 'bad')
  t.ok(invalid instanceof OpenAI.BadRequestError, 'MiniMax\'s 2013 in a 200 answer is the client\'s 400')
  t.match((invalid as InstanceType<typeof OpenAI.APIError>).message, /invalid params/)
  const streamed = await ask('MiniMax-M2', 'bad', true)
  t.ok(streamed instanceof OpenAI.BadRequestError, 'also for a streamed request answered with JSON')

  t.ok(await ask('MiniMax-M2.5') instanceof OpenAI.APIError, 'a login failure in a 200 answer fails the request')
  t.ok(await ask('@cf/qwen/qwq-32b') instanceof OpenAI.APIError, 'no account ID: nothing to call')
  const embedded = await client.embeddings.create({ model: 'jina-embeddings-v3', input: 'a' }).then(() => undefined, (err: unknown) => err)
  t.ok(embedded instanceof OpenAI.APIError, 'a refused Jina key fails the request')

  const rows = await app.db.selectFrom('channels').select(['id', 'status']).where('id', 'in', [good.id, wrong.id, noAccount.id, badJina.id]).orderBy('id').execute()
  t.same(rows.map((r) => r.status), [1, 3, 3, 3], 'the refused keys and the channel without its account ID are disabled, not the one that refused a bad request')
  t.notOk(up.seen.some((s) => s.path.includes('/accounts/')), 'nothing was sent to Cloudflare without the account ID')

  const events = await usageEvents(app)
  t.equal(events.length, 5)
  for (const e of events) t.match(e, { outcome: 'failed', quota: 0, prompt_tokens: 0, completion_tokens: 0 }, `${e.model_name}: nothing billed`)
})
