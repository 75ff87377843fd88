// App platforms behind OpenAI clients: Dify (chat and agent apps), AIProxy's knowledge base and
// FastGPT, each a real HTTP server speaking its own protocol, the official OpenAI client in front.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { countTokens } from 'gpt-tokenizer'
import OpenAI from 'openai'
import t, { type Test } from 'tap'
import { buildGateway, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

interface Seen { path: string, headers: IncomingMessage['headers'], body: Record<string, unknown> }

/** A local server answering with `handle`; every request it saw, in order. */
async function fakeServer (t: Test, handle: (seen: Seen, res: ServerResponse) => void): Promise<{ url: string, seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const entry = { path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown> }
      seen.push(entry)
      handle(entry, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
const sse = (res: ServerResponse, events: string[]) => {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' })
  for (const event of events) res.write(event)
  res.end()
}

const DIFY_USAGE = { prompt_tokens: 21, prompt_unit_price: '0.15', prompt_price: '0.0000032', completion_tokens: 5, completion_unit_price: '0.6', completion_price: '0.000003', total_tokens: 26, total_price: '0.0000062', currency: 'USD', latency: 0.4 }

/** Dify's service API: a chat app (key app-chat) and an agent app (key app-agent, streaming only). */
function dify (seen: Seen, res: ServerResponse): void {
  const ids = { task_id: 'task-1', message_id: 'msg-1', conversation_id: 'conv-1', created_at: 1_700_000_000 }
  const auth = seen.headers.authorization
  if (auth !== 'Bearer app-chat' && auth !== 'Bearer app-agent') {
    json(res, 401, { code: 'unauthorized', message: 'Access token is invalid', status: 401 })
    return
  }
  const agent = auth === 'Bearer app-agent'
  if (seen.body.response_mode === 'blocking') {
    if (agent) json(res, 400, { code: 'invalid_param', message: 'Agent Chat App does not support blocking mode', status: 400 })
    else json(res, 200, { event: 'message', ...ids, id: 'msg-1', mode: 'chat', answer: 'Hello from Dify', metadata: { usage: DIFY_USAGE, retriever_resources: [] } })
    return
  }
  const event = (data: Record<string, unknown>) => `data: ${JSON.stringify({ ...ids, ...data })}\n\n`
  const kind = agent ? 'agent_message' : 'message'
  sse(res, [
    'event: ping\n\n',
    ...(agent ? [event({ event: 'agent_thought', id: 'th-1', position: 1, thought: '', tool: 'weather', tool_input: '{"city":"Paris"}', observation: '' })] : []),
    event({ event: kind, id: 'msg-1', answer: agent ? 'Sunny ' : 'Hello ' }),
    event({ event: kind, id: 'msg-1', answer: agent ? 'in Paris.' : 'from Dify' }),
    event({ event: 'message_end', id: 'msg-1', metadata: { usage: DIFY_USAGE } })
  ])
}

/** AIProxy's library: `Api-Key`, library 42. */
function library (seen: Seen, res: ServerResponse): void {
  if (seen.headers['api-key'] !== 'sk-aip-gw' || seen.body.libraryId !== 42) {
    json(res, 401, { success: false, answer: null, documents: null, errCode: 401, errMsg: 'Invalid API key' })
    return
  }
  const documents = [{ title: 'Paris guide', url: 'https://docs.test/paris' }]
  if (seen.body.stream !== true) {
    json(res, 200, { success: true, answer: 'Paris is sunny.', documents, errCode: 0, errMsg: '' })
    return
  }
  sse(res, [
    `data: ${JSON.stringify({ content: 'Paris is ', finish: false })}\n\n`,
    `data: ${JSON.stringify({ content: 'sunny.', finish: false })}\n\n`,
    `data: ${JSON.stringify({ content: '', finish: true, documents })}\n\n`
  ])
}

/** A FastGPT app: placeholder usage, detail-mode events when asked for. */
function fastGPT (seen: Seen, res: ServerResponse): void {
  if (seen.headers.authorization !== 'Bearer fastgpt-gw') {
    json(res, 500, { code: 514, statusText: 'unAuthApiKey', message: 'Api Key 不合法', data: null })
    return
  }
  const chunk = (content: string | null, finish: string | null = null) =>
    JSON.stringify({ id: '', object: '', created: 0, model: '', choices: [{ delta: { role: 'assistant', content }, index: 0, finish_reason: finish }] })
  if (seen.body.stream !== true) {
    json(res, 200, { id: '', model: '', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 1 }, choices: [{ message: { role: 'assistant', content: 'Hello from FastGPT' }, finish_reason: 'stop', index: 0 }] })
    return
  }
  const named = seen.body.detail === true
  const event = (name: string, data: string) => `${named ? `event: ${name}\n` : ''}data: ${data}\n\n`
  sse(res, [
    ...(named ? [event('flowNodeStatus', JSON.stringify({ status: 'running', name: 'AI chat' }))] : []),
    event('answer', chunk('Hello ')),
    event('answer', chunk('from FastGPT')),
    event('answer', chunk(null, 'stop')),
    event('answer', '[DONE]'),
    ...(named ? [event('flowResponses', JSON.stringify([{ moduleName: 'AI chat', tokens: 30 }]))] : [])
  ])
}

t.test('Dify, AIProxy knowledge base and FastGPT channels serve the OpenAI client, streamed and not, each billed exactly', async (t) => {
  const { app, url } = await buildGateway(t)
  const difyUp = await fakeServer(t, dify)
  const libraryUp = await fakeServer(t, library)
  const fastGPTUp = await fakeServer(t, fastGPT)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values({ key: 'ModelRatio', value: JSON.stringify({ 'dify-chat': 1, 'dify-agent': 1, 'kb-gpt-4o-mini': 0.075, fastgpt: 1 }) }).execute()
  await seedChannel(app.db, { type: 37, baseUrl: difyUp.url, key: 'app-chat', models: ['dify-chat'] })
  const agent = await seedChannel(app.db, { type: 37, baseUrl: `${difyUp.url}/v1`, key: 'app-agent', models: ['dify-agent'] })
  await app.db.updateTable('channels').set({ other: 'agent' }).where('id', '=', agent.id).execute()
  await seedChannel(app.db, { type: 21, baseUrl: libraryUp.url, key: 'sk-aip-gw|42', models: ['kb-gpt-4o-mini'], modelMapping: { 'kb-gpt-4o-mini': 'gpt-4o-mini' } })
  await seedChannel(app.db, { type: 22, baseUrl: `${fastGPTUp.url}/api`, key: 'fastgpt-gw', models: ['fastgpt'] })
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })

  const collect = async (model: string, content: string, extra: Record<string, unknown> = {}) => {
    let text = ''
    let finish: string | null = null
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content }], stream: true, ...extra } as OpenAI.ChatCompletionCreateParamsStreaming)
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      finish = chunk.choices[0]?.finish_reason ?? finish
    }
    return { text, finish }
  }

  // Dify chat app.
  const chat = await client.chat.completions.create({ model: 'dify-chat', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }] })
  t.equal(chat.choices[0]?.message.content, 'Hello from Dify')
  t.match(chat.usage, { prompt_tokens: 21, completion_tokens: 5, total_tokens: 26 })
  t.match(difyUp.seen[0], { path: '/v1/chat-messages', headers: { authorization: 'Bearer app-chat' }, body: { query: 'System: Be brief.\n\nUser: Say hello', response_mode: 'blocking', conversation_id: '', inputs: {} } })
  t.same(await collect('dify-chat', 'Say hello'), { text: 'Hello from Dify', finish: 'stop' })
  t.equal(difyUp.seen[1]?.body.response_mode, 'streaming')

  // Dify agent app: streamed upstream even for a non-streamed client.
  const agentAnswer = await client.chat.completions.create({ model: 'dify-agent', messages: [{ role: 'user', content: 'Weather in Paris?' }] })
  t.equal(agentAnswer.choices[0]?.message.content, 'Sunny in Paris.')
  t.match(difyUp.seen[2], { path: '/v1/chat-messages', headers: { authorization: 'Bearer app-agent' }, body: { response_mode: 'streaming' } })
  t.same(await collect('dify-agent', 'Weather in Paris?'), { text: 'Sunny in Paris.', finish: 'stop' })

  // AIProxy's library: references appended; no usage upstream.
  const withReferences = 'Paris is sunny.\n\nReferences:\n[1] [Paris guide](https://docs.test/paris)'
  const kb = await client.chat.completions.create({ model: 'kb-gpt-4o-mini', messages: [{ role: 'user', content: 'Weather in Paris?' }] })
  t.equal(kb.choices[0]?.message.content, withReferences)
  t.same(libraryUp.seen[0]?.body, { model: 'gpt-4o-mini', query: 'Weather in Paris?', libraryId: 42, stream: false })
  t.same(await collect('kb-gpt-4o-mini', 'Weather in Paris?'), { text: withReferences, finish: 'stop' })

  // FastGPT: placeholder usage dropped; detail-mode events never reach the client.
  const fast = await client.chat.completions.create({ model: 'fastgpt', messages: [{ role: 'user', content: 'hi' }], chatId: 'c-1' } as OpenAI.ChatCompletionCreateParamsNonStreaming)
  t.equal(fast.choices[0]?.message.content, 'Hello from FastGPT')
  t.match(fastGPTUp.seen[0], { path: '/api/v1/chat/completions', body: { chatId: 'c-1', model: 'fastgpt' } })
  t.same(await collect('fastgpt', 'hi', { detail: true }), { text: 'Hello from FastGPT', finish: 'stop' })
  t.equal(fastGPTUp.seen[1]?.body.detail, true, 'detail passes through')

  const events = await usageEvents(app)
  t.equal(events.length, 8, 'one event per request')
  const of = (model: string, stream: boolean) => events.find((e) => e.model_name === model && e.is_stream === stream)
  for (const stream of [false, true]) {
    for (const model of ['dify-chat', 'dify-agent']) {
      t.match(of(model, stream), { usage_source: 'upstream', outcome: 'success', prompt_tokens: 21, completion_tokens: 5, cached_tokens: 0, quota: 21 + 5 }, `${model}, stream ${String(stream)}: Dify's usage`)
    }
    // Counted: 3 per message and 3 for the reply; the references are not generated text.
    t.match(of('kb-gpt-4o-mini', stream), { usage_source: 'counted', outcome: 'success', upstream_model: 'gpt-4o-mini', prompt_tokens: 3 + countTokens('Weather in Paris?') + 3, completion_tokens: countTokens('Paris is sunny.') }, `library, stream ${String(stream)}: counted`)
    t.match(of('fastgpt', stream), { usage_source: 'counted', outcome: 'success', prompt_tokens: 3 + countTokens('hi') + 3, completion_tokens: countTokens('Hello from FastGPT') }, `FastGPT, stream ${String(stream)}: counted, not the placeholder`)
  }
})

t.test('refused app keys disable their channels', async (t) => {
  const { app, url } = await buildGateway(t)
  const difyUp = await fakeServer(t, dify)
  const libraryUp = await fakeServer(t, library)
  const fastGPTUp = await fakeServer(t, fastGPT)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values({ key: 'ModelRatio', value: JSON.stringify({ 'dify-chat': 1, 'kb-revoked': 0.075, 'kb-malformed': 0.075, fastgpt: 1 }) }).execute()
  const channels = [
    await seedChannel(app.db, { type: 37, baseUrl: difyUp.url, key: 'app-revoked', models: ['dify-chat'] }),
    await seedChannel(app.db, { type: 21, baseUrl: libraryUp.url, key: 'sk-aip-revoked|42', models: ['kb-revoked'] }),
    // No library id in the key: refused before any call.
    await seedChannel(app.db, { type: 21, baseUrl: libraryUp.url, key: 'sk-aip-gw', models: ['kb-malformed'] }),
    await seedChannel(app.db, { type: 22, baseUrl: fastGPTUp.url, key: 'fastgpt-revoked', models: ['fastgpt'] })
  ]
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  for (const model of ['dify-chat', 'kb-revoked', 'kb-malformed', 'fastgpt']) {
    const err = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof OpenAI.APIError, `${model}: refused`)
  }
  t.equal(libraryUp.seen.length, 1, 'the malformed key never reached AIProxy')
  const rows = await app.db.selectFrom('channels').select(['id', 'status']).execute()
  for (const channel of channels) t.equal(rows.find((r) => r.id === channel.id)?.status, 3, `channel ${channel.id} (type ${channel.type}) disabled automatically`)
})
