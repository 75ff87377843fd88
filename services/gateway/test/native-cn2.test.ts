// The official OpenAI client through the gateway to channels of Alibaba DashScope (17), iFlytek
// Spark (18) and Tencent Hunyuan (23): local servers speaking each protocol (credentials checked
// as the provider does, Tencent's TC3 signature recomputed here), the usage events carrying the
// upstreams' exact tokens, and errors reported with HTTP 200 handled as refusals.
import { createHash, createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import OpenAI from 'openai'
import t, { type Test } from 'tap'
import { buildGateway, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

const DASHSCOPE_KEY = 'sk-dashscope-gw'
const SPARK_PASSWORD = 'spark-password-gw'
const SECRET_ID = 'AKIDgatewaytest'
const SECRET_KEY = 'gateway-secret'

interface Seen { path: string, headers: IncomingHttpHeaders, body: Buffer }

/** Tencent's check of a TC3-HMAC-SHA256 signature, computed from scratch. */
function tc3Valid (seen: Seen): boolean {
  const match = /^TC3-HMAC-SHA256 Credential=([^/]+)\/(\d{4}-\d{2}-\d{2})\/hunyuan\/tc3_request, SignedHeaders=content-type;host, Signature=([0-9a-f]{64})$/.exec(seen.headers.authorization ?? '')
  const timestamp = Number(seen.headers['x-tc-timestamp'])
  if (match === null || match[1] !== SECRET_ID || Math.abs(Date.now() / 1000 - timestamp) > 300) return false
  const date = new Date(timestamp * 1000).toISOString().slice(0, 10)
  const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex')
  const canonical = `POST\n/\n\ncontent-type:${String(seen.headers['content-type'])}\nhost:${String(seen.headers.host)}\n\ncontent-type;host\n${sha(seen.body)}`
  let key = createHmac('sha256', `TC3${SECRET_KEY}`).update(date).digest()
  key = createHmac('sha256', key).update('hunyuan').digest()
  key = createHmac('sha256', key).update('tc3_request').digest()
  return match[2] === date && createHmac('sha256', key).update(`TC3-HMAC-SHA256\n${timestamp}\n${date}/hunyuan/tc3_request\n${sha(canonical)}`).digest('hex') === match[3]
}

const json = (res: ServerResponse, status: number, body: unknown) => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)) }
const sse = (res: ServerResponse, events: string[]) => { res.writeHead(200, { 'content-type': 'text/event-stream' }).end(events.join('')) }

function dashscope (res: ServerResponse, seen: Seen): void {
  if (seen.headers.authorization !== `Bearer ${DASHSCOPE_KEY}`) return json(res, 401, { code: 'InvalidApiKey', message: 'Invalid API-key provided.', request_id: 'r0' })
  const body = JSON.parse(seen.body.toString()) as { input: { texts?: string[] }, parameters?: { incremental_output?: boolean } }
  if (seen.path.endsWith('/text-embedding')) {
    return json(res, 200, { output: { embeddings: (body.input.texts ?? []).map((_, i) => ({ text_index: i, embedding: [0.5, i] })) }, usage: { total_tokens: 6 }, request_id: 'r1' })
  }
  const usage = { input_tokens: 12, output_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 4 } }
  if (seen.headers['x-dashscope-sse'] !== 'enable') {
    return json(res, 200, { output: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'Hello from Qwen' } }] }, usage, request_id: 'r2' })
  }
  if (body.parameters?.incremental_output !== true) return json(res, 400, { code: 'InvalidParameter', message: 'expected incremental output', request_id: 'r3' })
  const event = (id: number, content: string, finish: string, tokens: Record<string, unknown>) =>
    `id:${id}\nevent:result\n:HTTP_STATUS/200\ndata:${JSON.stringify({ output: { choices: [{ message: { role: 'assistant', content }, finish_reason: finish }] }, usage: tokens, request_id: 'r4' })}\n\n`
  sse(res, [event(1, 'Hello ', 'null', { ...usage, output_tokens: 2 }), event(2, 'from Qwen', 'stop', usage)])
}

function spark (res: ServerResponse, seen: Seen): void {
  if (seen.headers.authorization !== `Bearer ${SPARK_PASSWORD}`) return json(res, 401, { message: 'HMAC signature cannot be verified' })
  const body = JSON.parse(seen.body.toString()) as { stream?: boolean, messages: Array<{ content: string }> }
  if (body.messages.at(-1)?.content === 'forbidden') return json(res, 200, { code: 10013, message: '输入内容审核不通过，涉嫌违规', sid: 's0' })
  const usage = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }
  if (body.stream !== true) {
    return json(res, 200, { code: 0, message: 'Success', sid: 's1', choices: [{ message: { role: 'assistant', content: 'Hello from Spark' }, index: 0 }], usage })
  }
  const chunk = (content: string, withUsage: boolean) =>
    `data:${JSON.stringify({ code: 0, message: 'Success', sid: 's2', id: 's2', created: 1719546385, choices: [{ delta: { role: 'assistant', content }, index: 0 }], ...(withUsage ? { usage } : {}) })}\n\n`
  sse(res, [chunk('Hello ', false), chunk('from Spark', false), chunk('', true), 'data:[DONE]\n\n'])
}

function hunyuan (res: ServerResponse, seen: Seen): void {
  const error = (code: string, message: string) => json(res, 200, { Response: { Error: { Code: code, Message: message }, RequestId: 'q0' } })
  if (!tc3Valid(seen)) return error('AuthFailure.SignatureFailure', 'The provided credentials could not be validated. Please check your signature is correct.')
  if (seen.headers['x-tc-action'] !== 'ChatCompletions' || seen.headers['x-tc-version'] !== '2023-09-01' || seen.headers['x-tc-region'] !== 'ap-guangzhou') {
    return error('InvalidAction', 'unexpected action')
  }
  const body = JSON.parse(seen.body.toString()) as { Model: string, Stream: boolean }
  if (body.Model === 'hunyuan-busy') return error('RequestLimitExceeded', 'Your current request is too frequent.')
  if (body.Model === 'hunyuan-nope') return error('InvalidParameterValue.Model', '模型不存在。')
  const usage = { PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19 }
  if (!body.Stream) {
    return json(res, 200, { Response: { Choices: [{ Message: { Role: 'assistant', Content: 'Hello from Hunyuan' }, FinishReason: 'stop' }], Created: 1, Id: 'h1', Usage: usage, RequestId: 'q1' } })
  }
  const chunk = (content: string, finish: string, tokens: Record<string, unknown>) =>
    `data: ${JSON.stringify({ Choices: [{ Delta: { Role: 'assistant', Content: content }, FinishReason: finish }], Created: 1, Id: 'h2', Usage: tokens })}\n\n`
  sse(res, [chunk('Hello ', '', { ...usage, CompletionTokens: 2 }), chunk('from Hunyuan', '', usage), chunk('', 'stop', usage)])
}

/** One local server for the three protocols, told apart by path. */
async function upstreams (t: Test): Promise<{ url: string, seen: Seen[] }> {
  const seen: Seen[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const entry = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }
      seen.push(entry)
      if (entry.path.startsWith('/api/v1/services/')) dashscope(res, entry)
      else if (entry.path === '/v1/chat/completions') spark(res, entry)
      else if (entry.path === '/') hunyuan(res, entry)
      else json(res, 404, { message: 'no route' })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

t.test('OpenAI clients through DashScope, Spark and Hunyuan channels, streamed and not, billed on the upstreams\' tokens', async (t) => {
  const { app, url } = await buildGateway(t)
  const up = await upstreams(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const models = ['qwen-plus', 'text-embedding-v4', 'generalv3.5', 'hunyuan-turbos-latest']
  await app.db.insertInto('options').values({ key: 'ModelRatio', value: JSON.stringify(Object.fromEntries(models.map((m) => [m, 0.5]))) }).execute()
  await seedChannel(app.db, { type: 17, baseUrl: up.url, key: DASHSCOPE_KEY, models: ['qwen-plus', 'text-embedding-v4'], name: 'dashscope' })
  await seedChannel(app.db, { type: 18, baseUrl: up.url, key: SPARK_PASSWORD, models: ['generalv3.5'], name: 'spark' })
  const tencent = await seedChannel(app.db, { type: 23, baseUrl: up.url, key: `${SECRET_ID}|${SECRET_KEY}`, models: ['hunyuan-turbos-latest'], name: 'tencent' })
  await app.db.updateTable('channels').set({ other: 'ap-guangzhou' }).where('id', '=', tencent.id).execute()
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })

  const expected: Array<{ model: string, text: string, cached: number }> = [
    { model: 'qwen-plus', text: 'Hello from Qwen', cached: 4 },
    { model: 'generalv3.5', text: 'Hello from Spark', cached: 0 },
    { model: 'hunyuan-turbos-latest', text: 'Hello from Hunyuan', cached: 0 }
  ]
  for (const { model, text, cached } of expected) {
    const answer = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })
    t.equal(answer.choices[0]?.message.content, text, `${model}: answered`)
    t.equal(answer.choices[0]?.finish_reason, 'stop')
    t.match(answer.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })
    if (cached > 0) t.equal(answer.usage?.prompt_tokens_details?.cached_tokens, cached)

    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
    let streamed = ''
    let finish: string | null | undefined
    let usage: OpenAI.CompletionUsage | undefined
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta.content ?? ''
      finish = chunk.choices[0]?.finish_reason ?? finish
      usage = chunk.usage ?? usage
    }
    t.equal(streamed, text, `${model}: streamed`)
    t.equal(finish, 'stop')
    t.match(usage, { prompt_tokens: 12, completion_tokens: 7 })
  }

  const embedded = await client.embeddings.create({ model: 'text-embedding-v4', input: ['a', 'b'] })
  t.same(embedded.data.map((d) => d.embedding), [[0.5, 0], [0.5, 1]], 'vectors decoded from the base64 the SDK asks for')
  t.equal(embedded.usage.prompt_tokens, 6)

  const events = await usageEvents(app)
  t.equal(events.length, 7)
  for (const { model, cached } of expected) {
    const mine = events.filter((e) => e.model_name === model)
    t.same(mine.map((e) => e.is_stream).sort(), [false, true], `${model}: one event each`)
    for (const e of mine) t.match(e, { prompt_tokens: 12, completion_tokens: 7, cached_tokens: cached, usage_source: 'upstream', outcome: 'success' }, `${model}: the upstream's tokens`)
  }
  t.match(events.find((e) => e.model_name === 'text-embedding-v4'), { prompt_tokens: 6, completion_tokens: 0, usage_source: 'upstream', outcome: 'success' })
  t.ok(up.seen.some((s) => s.path === '/' && typeof s.headers.authorization === 'string'), 'Hunyuan requests were signed')
})

t.test('errors Spark and Tencent report with HTTP 200 are refusals: the client\'s, retried, or the channel disabled', async (t) => {
  const { app, url } = await buildGateway(t)
  const up = await upstreams(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values({ key: 'ModelRatio', value: JSON.stringify({ 'generalv3.5': 0.5, 'hunyuan-nope': 0.5, 'hunyuan-busy': 0.5, 'hunyuan-lite': 0.5 }) }).execute()
  await seedChannel(app.db, { type: 18, baseUrl: up.url, key: SPARK_PASSWORD, models: ['generalv3.5'] })
  const good = await seedChannel(app.db, { type: 23, baseUrl: up.url, key: `${SECRET_ID}|${SECRET_KEY}`, models: ['hunyuan-nope', 'hunyuan-busy'] })
  const wrong = await seedChannel(app.db, { type: 23, baseUrl: up.url, key: `${SECRET_ID}|not-the-secret`, models: ['hunyuan-lite'] })
  await app.db.updateTable('channels').set({ other: 'ap-guangzhou' }).execute()
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const ask = async (model: string, content = 'hi', stream = false) =>
    await client.chat.completions.create({ model, messages: [{ role: 'user', content }], stream }).then(() => undefined, (err: unknown) => err)

  const refused = await ask('generalv3.5', 'forbidden')
  t.ok(refused instanceof OpenAI.BadRequestError, 'Spark\'s 10013 in a 200 answer is the client\'s 400')
  t.match((refused as InstanceType<typeof OpenAI.APIError>).message, /审核不通过/)

  const unknown = await ask('hunyuan-nope', 'hi', true)
  t.ok(unknown instanceof OpenAI.BadRequestError, 'a streamed request refused with a JSON 200 answer is the client\'s 400')
  t.match((unknown as InstanceType<typeof OpenAI.APIError>).message, /模型不存在/)

  const busy = await ask('hunyuan-busy')
  t.ok(busy instanceof OpenAI.APIError && busy.status === 429, 'RequestLimitExceeded is retried, then reported as a rate limit')

  const denied = await ask('hunyuan-lite')
  t.ok(denied instanceof OpenAI.APIError)
  const rows = await app.db.selectFrom('channels').select(['id', 'status']).where('id', 'in', [good.id, wrong.id]).orderBy('id').execute()
  t.same(rows.map((r) => r.status), [1, 3], 'only the channel whose signature Tencent refused is disabled')

  const events = await usageEvents(app)
  t.equal(events.length, 4)
  for (const e of events) t.match(e, { outcome: 'failed', quota: 0, prompt_tokens: 0, completion_tokens: 0 }, `${e.model_name}: nothing billed`)
  t.equal(up.seen.length, 4)
})
