// The Claude adaptor (type 14) against a real HTTP server on 127.0.0.1 speaking Anthropic's
// Messages API: it checks the key and the API version of every request, as Anthropic does, and
// answers in Anthropic's JSON, server-sent events and error envelopes.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import {
  adaptorFor,
  fetchModels,
  ProviderError,
  testChannel,
  type ChannelConfig,
  type ProviderAdaptor,
  type RelayRequest,
  type StreamConverter,
  type UpstreamRequest
} from '../src/index.js'

const KEY = 'sk-ant-api03-test-key'

interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: Buffer
}

type Answer = (res: ServerResponse, seen: Seen) => void | Promise<void>

function anthropicError (type: string, message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' })
}

/** A local Anthropic: refuses a wrong key (401) or a missing version (400) before answering. */
async function startAnthropic (t: Test): Promise<{ origin: string, seen: Seen[], answer: (next: Answer) => void, last: () => Seen }> {
  const seen: Seen[] = []
  let answer: Answer = (res) => { res.writeHead(500).end() }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const entry: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }
      seen.push(entry)
      if (req.headers['x-api-key'] !== KEY) {
        res.writeHead(401, { 'Content-Type': 'application/json' }).end(anthropicError('authentication_error', 'invalid x-api-key'))
        return
      }
      if (req.headers['anthropic-version'] === undefined) {
        res.writeHead(400, { 'Content-Type': 'application/json' }).end(anthropicError('invalid_request_error', 'anthropic-version: header is required'))
        return
      }
      Promise.resolve(answer(res, entry)).catch((err: unknown) => res.destroy(err as Error))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    answer: (next) => { answer = next },
    last: () => {
      const entry = seen.at(-1)
      if (entry === undefined) throw new Error('the server saw no request')
      return entry
    }
  }
}

function json (res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body))
}

const sse = (events: Array<Record<string, unknown>>): string =>
  events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('')

function write (res: ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => res.write(chunk, (err) => { if (err) reject(err); else resolve() }))
}

/** Sends `text` as an event stream in pieces of `size` bytes, each flushed on its own. */
async function streamInPieces (res: ServerResponse, text: string, size: number): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' })
  const bytes = Buffer.from(text)
  for (let at = 0; at < bytes.length; at += size) {
    await write(res, bytes.subarray(at, at + size))
    await new Promise((resolve) => setImmediate(resolve))
  }
  res.end()
}

async function send (up: UpstreamRequest): Promise<Response> {
  return await fetch(up.url, { method: up.method, headers: up.headers, body: up.body })
}

const bodyOf = (seen: Seen): Record<string, unknown> => JSON.parse(seen.body.toString('utf8')) as Record<string, unknown>

interface Relayed {
  out: string
  text: string
  finishedAfter: boolean[]
  error: unknown
}

/** Reads the upstream answer as the gateway does: chunk by chunk through the converter. */
async function relay (res: Response, converter: StreamConverter): Promise<Relayed> {
  const relayed: Relayed = { out: '', text: '', finishedAfter: [], error: undefined }
  if (res.body === null) throw new Error('no body')
  const reader = res.body.getReader()
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      relayed.out += converter.push(Buffer.from(next.value)).toString()
      relayed.text += converter.takeText()
      relayed.finishedAfter.push(converter.finished())
    }
  } catch (err) {
    relayed.error = err
  }
  relayed.out += converter.end().toString()
  relayed.text += converter.takeText()
  return relayed
}

/** The data of each event of an OpenAI stream, parsed, and whether it ended with [DONE]. */
function chunksOf (out: string): { chunks: Array<Record<string, unknown>>, done: boolean } {
  const events = out.split('\n\n').filter((event) => event !== '')
  const done = events.at(-1) === 'data: [DONE]'
  const chunks = (done ? events.slice(0, -1) : events).map((event) => {
    if (!event.startsWith('data: ')) throw new Error(`not a data event: ${event}`)
    return JSON.parse(event.slice('data: '.length)) as Record<string, unknown>
  })
  return { chunks, done }
}

const deltaOf = (chunk: Record<string, unknown>): Record<string, unknown> | undefined =>
  (chunk.choices as Array<{ delta: Record<string, unknown> }>)[0]?.delta

const finishOf = (chunk: Record<string, unknown>): unknown =>
  (chunk.choices as Array<{ finish_reason: unknown }>)[0]?.finish_reason

const found = adaptorFor(14)
if (found === undefined) throw new Error('no Claude adaptor')
const claude: ProviderAdaptor = found

const MODEL = 'claude-sonnet-4-5-20250929'
const channelAt = (origin: string): ChannelConfig => ({ id: 14, type: 14, key: KEY, baseUrl: origin, other: '', organization: null, setting: {} })
const chat = (body: Record<string, unknown>, stream = false, over: Partial<RelayRequest> = {}): RelayRequest =>
  ({ endpoint: 'chat', format: 'openai', model: MODEL, stream, body, ...over })
const messages = (body: Record<string, unknown>, stream = false, headers?: Record<string, string>): RelayRequest =>
  ({ endpoint: 'messages', format: 'anthropic', model: MODEL, stream, body, ...(headers === undefined ? {} : { headers }) })

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

t.test('serves OpenAI chat and Anthropic messages clients, nothing else', async (t) => {
  t.ok(claude.supports('chat', 'openai'))
  t.ok(claude.supports('messages', 'anthropic'))
  t.notOk(claude.supports('messages', 'openai'))
  t.notOk(claude.supports('chat', 'anthropic'))
  t.notOk(claude.supports('embeddings', 'openai'))
  t.notOk(claude.supports('generate_content', 'gemini'))
  const channel = channelAt('https://api.anthropic.com')
  t.throws(() => claude.buildRequest(channel, chat({}, false, { endpoint: 'embeddings' })), { code: 'PROV_ERR_UNSUPPORTED' })
  t.throws(() => claude.buildRequest(channel, { endpoint: 'chat', format: 'openai', model: MODEL, stream: false }), { code: 'PROV_ERR_NO_BODY' })
  t.equal(claude.name, 'Claude')
  t.ok(claude.defaultModels.includes('claude-sonnet-4-5-20250929') && claude.defaultModels.includes('claude-opus-4-1'))
})

t.test('converts an OpenAI chat request: system, images, tool calls and results, tools, limits', async (t) => {
  const up = await startAnthropic(t)
  up.answer((res) => json(res, { id: 'msg_1', type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } }))
  const channel = channelAt(up.origin)
  const tools = [
    { type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    { type: 'function', function: { name: 'now' } }
  ]
  const body = {
    model: 'alias',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
      { role: 'user', content: 'Weather in Paris and Lyon?' },
      { role: 'user', content: [
        { type: 'text', text: 'And this picture?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } }
      ] },
      { role: 'assistant', content: 'Checking.', tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } }
      ] },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
      { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '21°C' }] },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'Thanks' }
    ],
    tools,
    tool_choice: 'required',
    max_completion_tokens: 300,
    temperature: 1.4,
    top_p: 0.9,
    stop: 'END',
    user: 'user-42',
    logit_bias: { 50256: -100 },
    n: 1
  }
  const res = await send(claude.buildRequest(channel, chat(body)))
  t.equal(res.status, 200)
  const seen = up.last()
  t.equal(seen.method, 'POST')
  t.equal(seen.url, '/v1/messages')
  t.equal(seen.headers['x-api-key'], KEY)
  t.equal(seen.headers['anthropic-version'], '2023-06-01')
  t.match(seen.headers['content-type'], /^application\/json/)
  t.equal(seen.headers.authorization, undefined, 'no bearer key')
  t.same(bodyOf(seen), {
    model: MODEL,
    system: [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Answer in French.' }],
    messages: [
      { role: 'user', content: [
        { type: 'text', text: 'Weather in Paris and Lyon?' },
        { type: 'text', text: 'And this picture?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } }
      ] },
      { role: 'assistant', content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Lyon' } }
      ] },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: '21°C' },
        { type: 'text', text: 'Thanks' }
      ] }
    ],
    max_tokens: 300,
    temperature: 1,
    stop_sequences: ['END'],
    tools: [
      { name: 'get_weather', description: 'Current weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'now', input_schema: { type: 'object', properties: {} } }
    ],
    tool_choice: { type: 'any' },
    metadata: { user_id: 'user-42' }
  }, 'consecutive turns merged, tool results in one user turn, the empty assistant turn dropped, no OpenAI-only fields')

  const choices: Array<[unknown, unknown, unknown]> = [
    ['auto', undefined, { type: 'auto' }],
    ['none', undefined, { type: 'none' }],
    [{ type: 'function', function: { name: 'now' } }, undefined, { type: 'tool', name: 'now' }],
    [undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
    ['required', false, { type: 'any', disable_parallel_tool_use: true }],
    [undefined, undefined, undefined]
  ]
  for (const [choice, parallel, expected] of choices) {
    await send(claude.buildRequest(channel, chat({ messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: choice, parallel_tool_calls: parallel })))
    t.same(bodyOf(up.last()).tool_choice, expected, `tool_choice ${JSON.stringify(choice)}, parallel_tool_calls ${String(parallel)}`)
  }
  await send(claude.buildRequest(channel, chat({ messages: [{ role: 'user', content: 'hi' }], tool_choice: 'auto' })))
  t.notOk('tool_choice' in bodyOf(up.last()), 'no tool_choice without tools')

  await send(claude.buildRequest(channel, chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 50, top_p: 0.5, stop: ['a', 'b'] }, true)))
  t.same(bodyOf(up.last()), { model: MODEL, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], max_tokens: 50, top_p: 0.5, stop_sequences: ['a', 'b'], stream: true })
  await send(claude.buildRequest(channel, chat({ messages: [{ role: 'user', content: 'hi' }] })))
  t.equal(bodyOf(up.last()).max_tokens, 4096, 'Anthropic requires max_tokens: a default is sent')
  t.notOk('stream' in bodyOf(up.last()))
})

t.test('asks for thinking from reasoning_effort or a thinking field', async (t) => {
  const up = await startAnthropic(t)
  up.answer((res) => json(res, {}))
  const channel = channelAt(up.origin)
  const hi = [{ role: 'user', content: 'hi' }]

  await send(claude.buildRequest(channel, chat({ messages: hi, reasoning_effort: 'medium', temperature: 0.3, top_p: 0.5 })))
  t.match(bodyOf(up.last()), { thinking: { type: 'enabled', budget_tokens: 4096 }, max_tokens: 4096 + 4096 })
  t.notOk('temperature' in bodyOf(up.last()), 'temperature refused with thinking: not sent')
  t.notOk('top_p' in bodyOf(up.last()), 'top_p below 0.95 refused with thinking: not sent')

  await send(claude.buildRequest(channel, chat({ messages: hi, reasoning_effort: 'high', max_tokens: 8000 })))
  t.match(bodyOf(up.last()), { thinking: { type: 'enabled', budget_tokens: 7999 }, max_tokens: 8000 }, 'the budget shrinks to fit max_tokens')
  await send(claude.buildRequest(channel, chat({ messages: hi, reasoning_effort: 'low', max_tokens: 500 })))
  t.notOk('thinking' in bodyOf(up.last()), 'no room for the smallest budget: no thinking')
  await send(claude.buildRequest(channel, chat({ messages: hi, reasoning_effort: 'minimal' })))
  t.notOk('thinking' in bodyOf(up.last()))

  await send(claude.buildRequest(channel, chat({ messages: hi, thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 6000 })))
  t.match(bodyOf(up.last()), { thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 6000 })
  await send(claude.buildRequest(channel, chat({ messages: hi, thinking: { type: 'disabled' }, temperature: 0.2 })))
  t.match(bodyOf(up.last()), { thinking: { type: 'disabled' }, temperature: 0.2 })

  const loop = [
    ...hi,
    { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'now', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'toolu_1', content: '12:00' }
  ]
  await send(claude.buildRequest(channel, chat({ messages: loop, reasoning_effort: 'high', temperature: 0.3 })))
  t.notOk('thinking' in bodyOf(up.last()), 'no thinking inside a tool loop: its signed thinking blocks cannot be sent back')
  t.equal(bodyOf(up.last()).temperature, 0.3)
  await send(claude.buildRequest(channel, chat({ messages: [...loop, { role: 'assistant', content: 'Noon.' }, { role: 'user', content: 'Thanks' }], reasoning_effort: 'high' })))
  t.match(bodyOf(up.last()), { thinking: { type: 'enabled', budget_tokens: 16384 } }, 'thinking again once the loop is over')
})

t.test('converts an answer with thinking, text and tool calls; usage counts the prompt cache', async (t) => {
  const up = await startAnthropic(t)
  const answer = {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL', type: 'message', role: 'assistant', model: MODEL,
    content: [
      { type: 'thinking', thinking: 'Two cities: two calls.', signature: 'EqQBCgIYAhIM' },
      { type: 'text', text: 'Let me check ' },
      { type: 'text', text: 'both.' },
      { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'Lyon', unit: 'c' } }
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 21, cache_creation_input_tokens: 1500, cache_read_input_tokens: 3000, output_tokens: 95 }
  }
  up.answer((res) => json(res, answer))
  const channel = channelAt(up.origin)
  const req = chat({ messages: [{ role: 'user', content: 'Weather in Paris and Lyon?' }] })
  const res = await send(claude.buildRequest(channel, req))
  const converted = claude.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', Buffer.from(await res.arrayBuffer()))
  t.equal(converted.status, 200)
  t.equal(converted.contentType, 'application/json')
  const body = JSON.parse(Buffer.from(converted.body).toString('utf8')) as Record<string, unknown>
  t.match(body, { id: 'msg_01XFDUDYJgAACzvnptvVoYEL', object: 'chat.completion', model: MODEL })
  t.type(body.created, 'number')
  t.same(body.choices, [{
    index: 0,
    message: {
      role: 'assistant',
      content: 'Let me check both.',
      reasoning_content: 'Two cities: two calls.',
      tool_calls: [
        { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_01B', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon","unit":"c"}' } }
      ]
    },
    logprobs: null,
    finish_reason: 'tool_calls'
  }])
  t.same(body.usage, { prompt_tokens: 4521, completion_tokens: 95, total_tokens: 4616, prompt_tokens_details: { cached_tokens: 3000 } })
  t.same(converted.usage, { promptTokens: 4521, completionTokens: 95, cachedTokens: 3000, cacheWriteTokens: 1500 },
    'prompt = input + cache reads + cache writes')
  t.equal(converted.text, 'Two cities: two calls.Let me check both.{"city":"Paris"}{"city":"Lyon","unit":"c"}')

  const reasons: Array<[string, string]> = [['end_turn', 'stop'], ['stop_sequence', 'stop'], ['max_tokens', 'length'], ['tool_use', 'tool_calls'], ['refusal', 'content_filter'], ['pause_turn', 'stop']]
  for (const [stop, finish] of reasons) {
    up.answer((res) => json(res, { ...answer, content: [{ type: 'text', text: 'x' }], stop_reason: stop, usage: { input_tokens: 5, output_tokens: 1 } }))
    const res = await send(claude.buildRequest(channel, req))
    const converted = claude.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', Buffer.from(await res.arrayBuffer()))
    const choice = (JSON.parse(Buffer.from(converted.body).toString('utf8')) as { choices: Array<{ finish_reason: string, message: { content: unknown } }> }).choices[0]
    t.equal(choice?.finish_reason, finish, `${stop} -> ${finish}`)
    t.equal(choice?.message.content, 'x')
    t.same(converted.usage, { promptTokens: 5, completionTokens: 1 }, 'no cache fields when there was no cache')
  }

  up.answer((res) => json(res, { ...answer, content: [answer.content[3]] }))
  const only = await send(claude.buildRequest(channel, req))
  const toolOnly = claude.convertResponse(channel, req, 200, 'application/json', Buffer.from(await only.arrayBuffer()))
  t.equal((JSON.parse(Buffer.from(toolOnly.body).toString('utf8')) as { choices: Array<{ message: { content: unknown } }> }).choices[0]?.message.content, null,
    'content is null when the answer is only tool calls')
})

/** A streamed answer: thinking, text, two parallel tool calls, cache usage. */
function richStream (): string {
  return sse([
    { type: 'message_start', message: { id: 'msg_014p7gG3wDgGV9EUtLvnow3U', type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 472, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 2 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'ping' },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Deux villes, ' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'deux appels.' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Je vérifie ' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'les deux 🌦️.' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city": "Pa' } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: 'ris"}' } },
    { type: 'content_block_stop', index: 2 },
    { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: {} } },
    { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"city": "Lyon"}' } },
    { type: 'content_block_stop', index: 3 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 89 } },
    { type: 'message_stop' }
  ])
}

t.test('converts a stream with thinking, text and parallel tool calls, event by event', async (t) => {
  const up = await startAnthropic(t)
  const stream = richStream()
  up.answer((res) => streamInPieces(res, stream, 7))
  const channel = channelAt(up.origin)
  const req = chat({ messages: [{ role: 'user', content: 'Météo à Paris et Lyon ?' }], stream: true, tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }] }, true)
  const converter = claude.createStream(channel, req)
  const res = await send(claude.buildRequest(channel, req))
  t.equal(bodyOf(up.last()).stream, true)
  const relayed = await relay(res, converter)
  t.equal(relayed.error, undefined)
  t.ok(relayed.finishedAfter.length > 100, `arrived in ${relayed.finishedAfter.length} pieces`)
  t.equal(relayed.finishedAfter.indexOf(true), relayed.finishedAfter.length - 1, 'finished only once message_stop is complete')

  const { chunks, done } = chunksOf(relayed.out)
  t.ok(done, 'ends with data: [DONE]')
  for (const chunk of chunks) t.match(chunk, { id: 'msg_014p7gG3wDgGV9EUtLvnow3U', object: 'chat.completion.chunk', model: MODEL })
  t.same(deltaOf(chunks[0]!), { role: 'assistant', content: '' }, 'the role comes first')
  const deltas = chunks.slice(1, -2).map((chunk) => deltaOf(chunk))
  t.same(deltas, [
    { reasoning_content: 'Deux villes, ' },
    { reasoning_content: 'deux appels.' },
    { content: 'Je vérifie ' },
    { content: 'les deux 🌦️.' },
    { tool_calls: [{ index: 0, id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '{"city": "Pa' } }] },
    { tool_calls: [{ index: 0, function: { arguments: 'ris"}' } }] },
    { tool_calls: [{ index: 1, id: 'toolu_01B', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
    { tool_calls: [{ index: 1, function: { arguments: '{"city": "Lyon"}' } }] }
  ], 'reasoning, content, then each tool call: id and name, then its argument fragments')
  t.same(deltaOf(chunks.at(-2)!), {})
  t.equal(finishOf(chunks.at(-2)!), 'tool_calls')
  t.same(chunks.at(-1), {
    id: 'msg_014p7gG3wDgGV9EUtLvnow3U', object: 'chat.completion.chunk', created: chunks[0]?.created, model: MODEL,
    choices: [],
    usage: { prompt_tokens: 2572, completion_tokens: 89, total_tokens: 2661, prompt_tokens_details: { cached_tokens: 2000 } }
  }, 'the usage chunk, as OpenAI sends it')
  t.same(converter.usage(), { promptTokens: 2572, completionTokens: 89, cachedTokens: 2000, cacheWriteTokens: 100 })
  t.equal(relayed.text, 'Deux villes, deux appels.Je vérifie les deux 🌦️.{"city": "Paris"}{"city": "Lyon"}')
  t.equal(converter.takeText(), '')
  t.equal(converter.untakenBytes(), 0)
})

t.test('a stream fed one byte at a time gives the same answer', async (t) => {
  const stream = richStream()
  const whole = claude.createStream(channelAt('https://api.anthropic.com'), chat({}, true))
  const expected = whole.push(Buffer.from(stream)).toString()
  const bytes = claude.createStream(channelAt('https://api.anthropic.com'), chat({}, true))
  let out = ''
  for (const byte of Buffer.from(stream.replaceAll('\n', '\r\n'))) out += bytes.push(Buffer.from([byte])).toString()
  out += bytes.end().toString()
  const strip = (text: string) => text.replace(/"created":\d+/g, '"created":0')
  t.equal(strip(out), strip(expected), 'CRLF line endings and one-byte chunks change nothing')
  t.ok(bytes.finished())
  t.same(bytes.usage(), whole.usage())
})

t.test('an error event: before any content nothing is sent (the gateway may retry); after it, an OpenAI error chunk', async (t) => {
  const channel = channelAt('https://api.anthropic.com')
  const start = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: MODEL, content: [], usage: { input_tokens: 5, output_tokens: 1 } } }
  const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }

  const early = claude.createStream(channel, chat({}, true))
  t.equal(early.push(Buffer.from(sse([start, { type: 'ping' }, error]))).length, 0, 'nothing for the client yet')
  t.equal(early.end().length, 0)
  t.notOk(early.finished())
  t.equal(early.usage(), undefined)

  const late = claude.createStream(channel, chat({}, true))
  const out = late.push(Buffer.from(sse([start, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hal' } }, error]))).toString()
  const { chunks, done } = chunksOf(out)
  t.notOk(done)
  t.same(chunks.map((chunk) => chunk.error ?? deltaOf(chunk)), [
    { role: 'assistant', content: '' },
    { content: 'Hal' },
    { message: 'Overloaded', type: 'overloaded_error', param: null, code: 'overloaded_error' }
  ])
  t.notOk(late.finished(), 'not a normal end: the gateway reports the stream as interrupted')
  t.equal(late.takeText(), 'Hal')
})

t.test('a cut stream: complete events converted, no usage, not finished', async (t) => {
  const up = await startAnthropic(t)
  const stream = richStream()
  const cutAt = Buffer.from(stream).indexOf('les deux') + 3
  up.answer(async (res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' })
    await write(res, Buffer.from(stream).subarray(0, cutAt))
    res.destroy()
  })
  const channel = channelAt(up.origin)
  const req = chat({ messages: [{ role: 'user', content: 'hi' }] }, true)
  const converter = claude.createStream(channel, req)
  const relayed = await relay(await send(claude.buildRequest(channel, req)), converter)
  t.ok(relayed.error)
  t.notOk(converter.finished())
  t.equal(converter.usage(), undefined, 'no usage before message_delta: the gateway counts the text')
  t.equal(relayed.text, 'Deux villes, deux appels.Je vérifie ')
  t.notMatch(relayed.out, /les deux/, 'the cut event is not sent')
})

t.test('passes an Anthropic client\'s request through: body, stream flag, beta and version headers', async (t) => {
  const up = await startAnthropic(t)
  const answer = { id: 'msg_2', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'text', text: 'Bonjour' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 0, output_tokens: 3 } }
  up.answer((res) => json(res, answer))
  const channel = channelAt(`${up.origin}/v1`)
  const body = {
    model: 'claude-alias',
    max_tokens: 1024,
    system: [{ type: 'text', text: 'Long context', cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Bonjour' }] }],
    thinking: { type: 'enabled', budget_tokens: 2000 },
    mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }],
    future_field: { kept: true }
  }
  const req = messages(body, false, { 'anthropic-beta': 'context-1m-2025-08-07,mcp-client-2025-04-04', 'anthropic-version': '2023-06-01' })
  const built = claude.buildRequest(channel, req)
  t.equal(built.url, `${up.origin}/v1/messages`, 'a base URL ending in /v1 is not doubled')
  const res = await send(built)
  const seen = up.last()
  t.same(bodyOf(seen), { ...body, model: MODEL }, 'the client body with the upstream model, nothing else changed')
  t.equal(seen.headers['anthropic-beta'], 'context-1m-2025-08-07,mcp-client-2025-04-04')
  t.equal(seen.headers['x-api-key'], KEY)
  const raw = Buffer.from(await res.arrayBuffer())
  const converted = claude.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', raw)
  t.same(Buffer.from(converted.body), raw, 'the answer goes back unchanged')
  t.same(converted.usage, { promptTokens: 210, completionTokens: 3, cacheWriteTokens: 200 })
  t.equal(converted.text, 'Bonjour')

  const other = claude.buildRequest(channel, messages({ ...body, stream: true }, true, { 'Anthropic-Version': '2024-01-01' }))
  t.equal(other.headers['anthropic-version'], '2024-01-01', 'the client\'s own version, for a body written for it')
  t.equal(other.headers['anthropic-beta'], undefined)
  t.equal(JSON.parse(String(other.body)).stream, true, 'the stream flag as given')
  const plain = claude.buildRequest(channel, messages(body))
  t.equal(plain.headers['anthropic-version'], '2023-06-01', 'ours when the client sent none')

  const converting = claude.buildRequest(channel, chat({ messages: [] }, false, { headers: { 'anthropic-beta': 'context-1m-2025-08-07', 'anthropic-version': '2024-01-01' } }))
  t.equal(converting.headers['anthropic-beta'], 'context-1m-2025-08-07', 'a beta asked for by an OpenAI client is forwarded too')
  t.equal(converting.headers['anthropic-version'], '2023-06-01', 'a converted body is written for our version')
})

t.test('passes an Anthropic stream through unchanged, reading its usage', async (t) => {
  const up = await startAnthropic(t)
  const stream = richStream()
  up.answer((res) => streamInPieces(res, stream, 5))
  const channel = channelAt(up.origin)
  const req = messages({ model: 'x', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] }, true)
  const converter = claude.createStream(channel, req)
  const relayed = await relay(await send(claude.buildRequest(channel, req)), converter)
  t.equal(relayed.out, stream, 'the same bytes')
  t.equal(relayed.finishedAfter.indexOf(true), relayed.finishedAfter.length - 1, 'finished on message_stop')
  t.same(converter.usage(), { promptTokens: 2572, completionTokens: 89, cachedTokens: 2000, cacheWriteTokens: 100 })
  t.equal(relayed.text, 'Deux villes, deux appels.Je vérifie les deux 🌦️.{"city": "Paris"}{"city": "Lyon"}')

  const cut = claude.createStream(channel, req)
  const until = Buffer.from(stream).indexOf('les deux')
  const sent = cut.push(Buffer.from(stream).subarray(0, until)).toString()
  t.ok(stream.startsWith(sent) && sent.endsWith('\n\n'), 'only complete events go out')
  t.equal(cut.end().length, 0, 'the cut event is held back')
  t.notOk(cut.finished())
  t.equal(cut.usage(), undefined)

  const later = claude.createStream(channel, req)
  const usageAfterDelta = sse([
    { type: 'message_start', message: { id: 'm', usage: { input_tokens: 3, output_tokens: 1 } } },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { input_tokens: 40, cache_read_input_tokens: 60, output_tokens: 9 } }
  ])
  later.push(Buffer.from(usageAfterDelta))
  t.same(later.usage(), { promptTokens: 100, completionTokens: 9, cachedTokens: 60 }, 'counts repeated in message_delta win')
  t.notOk(later.finished())
})

t.test('classifies Anthropic errors; a wrong key disables the channel', async (t) => {
  const up = await startAnthropic(t)
  const channel = channelAt(up.origin)
  const res = await send(claude.buildRequest({ ...channel, key: 'sk-ant-wrong' }, chat({ messages: [{ role: 'user', content: 'hi' }] })))
  t.equal(res.status, 401)
  t.same(claude.classifyFailure(res.status, await res.text()), { action: 'disable', message: 'invalid x-api-key', code: 'authentication_error' })

  const cases: Array<[number, string, string, string]> = [
    [403, 'permission_error', 'Your API key does not have permission to use the specified resource.', 'disable'],
    [402, 'billing_error', 'Payment required', 'disable'],
    [400, 'invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.', 'disable'],
    [400, 'invalid_request_error', 'You have reached your specified API usage limits. You will regain access on 2026-12-01 at 00:00 UTC.', 'disable'],
    [429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', 'retry'],
    [500, 'api_error', 'Internal server error', 'retry'],
    [529, 'overloaded_error', 'Overloaded', 'retry'],
    [400, 'invalid_request_error', 'max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929', 'client'],
    [404, 'not_found_error', 'model: claude-nope', 'client'],
    [413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.', 'client']
  ]
  for (const [status, type, message, action] of cases) {
    up.answer((res) => { res.writeHead(status, { 'Content-Type': 'application/json' }).end(anthropicError(type, message)) })
    const res = await send(claude.buildRequest(channel, chat({ messages: [{ role: 'user', content: 'hi' }] })))
    t.equal(res.status, status)
    const failure = claude.classifyFailure(res.status, await res.text())
    t.same(failure, { action, message, code: type }, `${status} ${type}: ${action}`)
  }
  t.match(claude.classifyFailure(503, '<html>upstream connect error</html>'), { action: 'retry', message: /503/ })
  t.notMatch(claude.classifyFailure(400, anthropicError('invalid_request_error', 'bad image at https://files.example.com/a.png with key sk-ant-api03-abcdefghijklmnop')).message,
    /https:|sk-ant-api03-abcdefghijklmnop/, 'no link or key in the message')
})

t.test('lists models and tests the channel through the probe', async (t) => {
  const up = await startAnthropic(t)
  let failNext = false
  up.answer((res, seen) => {
    if (seen.method === 'GET') {
      json(res, { data: [
        { type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
        { type: 'model', id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5', created_at: '2025-10-01T00:00:00Z' }
      ], has_more: false, first_id: 'claude-sonnet-4-5-20250929', last_id: 'claude-haiku-4-5-20251001' })
      return
    }
    if (failNext) {
      res.writeHead(529, { 'Content-Type': 'application/json' }).end(anthropicError('overloaded_error', 'Overloaded'))
      return
    }
    json(res, { id: 'msg_3', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'text', text: 'Hi!' }], stop_reason: 'end_turn', usage: { input_tokens: 8, output_tokens: 3 } })
  })
  const channel = channelAt(up.origin)
  t.same(await fetchModels(claude, channel), ['claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001'])
  const listing = up.last()
  t.equal(listing.url, '/v1/models?limit=1000')
  t.equal(listing.headers['x-api-key'], KEY)
  t.equal(listing.headers['anthropic-version'], '2023-06-01')
  t.throws(() => claude.parseModels('{"type":"error"}'), ProviderError)
  await t.rejects(fetchModels(claude, { ...channel, key: 'wrong' }), { message: 'invalid x-api-key' })

  t.match(await testChannel(claude, channel, MODEL), { ok: true, message: '' })
  t.match(bodyOf(up.last()), { model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })
  t.match(await testChannel(claude, { ...channel, key: 'wrong' }, MODEL), { ok: false, action: 'disable', message: 'invalid x-api-key' })
  failNext = true
  t.match(await testChannel(claude, channel, MODEL), { ok: false, action: 'retry', message: 'Overloaded' })

  t.equal(claude.listModelsRequest({ ...channel, baseUrl: '' })?.url, 'https://api.anthropic.com/v1/models?limit=1000')
  t.equal(claude.buildRequest({ ...channel, baseUrl: '' }, chat({ messages: [] })).url, 'https://api.anthropic.com/v1/messages')
})
