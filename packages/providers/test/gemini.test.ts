// The Gemini adaptor (type 24) against a real HTTP server on 127.0.0.1 speaking Google's Gemini
// API: it checks the x-goog-api-key header of every request (a wrong key gets Google's 400
// API_KEY_INVALID), refuses a key in the URL, and answers in Gemini's JSON, `alt=sse` events and
// error envelopes.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import {
  adaptorFor,
  fetchModels,
  testChannel,
  type ChannelConfig,
  type ProviderAdaptor,
  type RelayRequest,
  type StreamConverter,
  type UpstreamRequest
} from '../src/index.js'

const KEY = 'AIzaSyTestKey-0123456789abcdefghijklm'
const MODEL = 'gemini-2.5-flash'

interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: Buffer
}

type Answer = (res: ServerResponse, seen: Seen) => void | Promise<void>

function googleError (code: number, status: string, message: string, reason?: string): string {
  const details = reason === undefined ? undefined : [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }]
  return JSON.stringify({ error: { code, message, status, ...(details === undefined ? {} : { details }) } })
}

/** A local Gemini API: refuses a wrong key (400 API_KEY_INVALID) and a key in the URL before answering. */
async function startGemini (t: Test): Promise<{ origin: string, answer: (next: Answer) => void, last: () => Seen }> {
  const seen: Seen[] = []
  let answer: Answer = (res) => { res.writeHead(500).end() }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const entry: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }
      seen.push(entry)
      if (req.headers['x-goog-api-key'] !== KEY || /[?&]key=/.test(entry.url)) {
        res.writeHead(400, { 'Content-Type': 'application/json; charset=UTF-8' })
          .end(googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'))
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
    answer: (next) => { answer = next },
    last: () => {
      const entry = seen.at(-1)
      if (entry === undefined) throw new Error('the server saw no request')
      return entry
    }
  }
}

function json (res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body))
}

const sse = (events: unknown[]): string => events.map((event) => `data: ${JSON.stringify(event)}\r\n\r\n`).join('')

function write (res: ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => res.write(chunk, (err) => { if (err) reject(err); else resolve() }))
}

/** Sends `text` as an event stream in pieces of `size` bytes, each flushed on its own. */
async function streamInPieces (res: ServerResponse, text: string, size: number): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' })
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

interface Relayed { out: string, text: string, finishedAfter: boolean[], tail: string, error: unknown }

/** Reads the upstream answer as the gateway does: chunk by chunk through the converter. */
async function relay (res: Response, converter: StreamConverter): Promise<Relayed> {
  const relayed: Relayed = { out: '', text: '', finishedAfter: [], tail: '', error: undefined }
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
  relayed.tail = converter.end().toString()
  relayed.text += converter.takeText()
  return relayed
}

interface Chunk {
  id?: string
  object?: string
  model?: string
  usage?: unknown
  choices: Array<{
    index: number
    delta: { role?: string, content?: string, reasoning_content?: string, tool_calls?: unknown[] }
    finish_reason: string | null
  }>
}

/** The data of each event of an OpenAI stream, parsed, and whether it ended with [DONE]. */
function chunksOf (out: string): { chunks: Chunk[], done: boolean } {
  const events = out.split('\n\n').filter((event) => event !== '')
  const done = events.at(-1) === 'data: [DONE]'
  const chunks = (done ? events.slice(0, -1) : events).map((event) => {
    if (!event.startsWith('data: ')) throw new Error(`not a data event: ${event}`)
    return JSON.parse(event.slice('data: '.length)) as Chunk
  })
  return { chunks, done }
}

function adaptor (): ProviderAdaptor {
  const found = adaptorFor(24)
  if (found === undefined) throw new Error('no Gemini adaptor')
  return found
}

const chat = (body: Record<string, unknown>, stream = false, model = MODEL): RelayRequest =>
  ({ endpoint: 'chat', format: 'openai', model, stream, body: stream ? { ...body, stream: true } : body })

const USAGE = { promptTokenCount: 30, candidatesTokenCount: 10, thoughtsTokenCount: 25, cachedContentTokenCount: 8, totalTokenCount: 65 }

async function setup (t: Test) {
  const up = await startGemini(t)
  const channel: ChannelConfig = { id: 24, type: 24, key: KEY, baseUrl: up.origin, other: '', organization: null, setting: {} }
  const gemini = adaptor()
  const convert = async (req: RelayRequest, res: Response) =>
    gemini.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', Buffer.from(await res.arrayBuffer()))
  return { up, channel, gemini, convert }
}

t.test('builds Google URLs with the key in x-goog-api-key only', async (t) => {
  const gemini = adaptor()
  t.equal(gemini.type, 24)
  t.equal(gemini.name, 'Gemini')
  t.ok(gemini.supports('chat', 'openai'))
  t.ok(gemini.supports('generate_content', 'gemini'))
  t.notOk(gemini.supports('messages', 'anthropic'))
  t.notOk(gemini.supports('embeddings', 'openai'))
  const channel: ChannelConfig = { id: 1, type: 24, key: ` ${KEY} `, baseUrl: '', other: '', organization: null, setting: {} }
  const up = gemini.buildRequest(channel, chat({ messages: [{ role: 'user', content: 'hi' }] }))
  t.equal(up.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent')
  t.same(up.headers, { 'x-goog-api-key': KEY, 'content-type': 'application/json' })
  t.equal(gemini.buildRequest(channel, chat({ messages: [] }, true, 'models/gemini-2.5-pro')).url,
    'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', 'a models/ prefix is not doubled')
  t.equal(gemini.buildRequest({ ...channel, baseUrl: 'https://proxy.example/v1beta/' }, chat({ messages: [] })).url,
    'https://proxy.example/v1beta/models/gemini-2.5-flash:generateContent', 'a base URL with /v1beta is not doubled')
  t.same(gemini.listModelsRequest(channel), { method: 'GET', url: 'https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000', headers: { 'x-goog-api-key': KEY } })
  t.throws(() => gemini.buildRequest(channel, { ...chat({}), endpoint: 'embeddings' }), { code: 'PROV_ERR_UNSUPPORTED' })
  t.ok(gemini.defaultModels.includes('gemini-2.5-pro') && gemini.defaultModels.includes('gemini-2.5-flash-lite') && gemini.defaultModels.includes('gemini-2.0-flash'))
})

t.test('converts an OpenAI conversation to a Gemini request', async (t) => {
  const { up, channel, gemini } = await setup(t)
  up.answer((res) => json(res, { candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: USAGE }))
  const body = {
    model: 'client-alias',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these pictures, and the weather?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.JPG?size=large' } },
          { type: 'image_url', image_url: 'https://example.com/render' }
        ]
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }
        ]
      },
      { role: 'tool', tool_call_id: 'call_a', content: '{"temp":21,"sky":"clear"}' },
      { role: 'tool', tool_call_id: 'call_b', content: '14:00' },
      { role: 'user', content: 'Thanks' }
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather',
          parameters: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            additionalProperties: false,
            properties: { city: { type: 'string', format: 'uri', minLength: 1 }, unit: { type: ['string', 'null'], enum: ['c', 'f'] }, kind: { const: 'now' } },
            required: ['city']
          }
        }
      },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }
    ],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    temperature: 0.2,
    top_p: 0.9,
    max_completion_tokens: 500,
    stop: ['END'],
    n: 2,
    response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } } } },
    reasoning_effort: 'high'
  }
  const res = await send(gemini.buildRequest(channel, chat(body)))
  t.equal(res.status, 200, 'the key was accepted')
  const seen = up.last()
  t.equal(seen.method, 'POST')
  t.equal(seen.url, '/v1beta/models/gemini-2.5-flash:generateContent')
  t.equal(seen.headers['x-goog-api-key'], KEY)
  t.match(seen.headers['content-type'], /^application\/json/)
  const sent = bodyOf(seen)
  t.equal(sent.model, undefined, 'no model in the body')
  t.same(sent.systemInstruction, { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] })
  t.same(sent.contents, [
    {
      role: 'user',
      parts: [
        { text: 'What is in these pictures, and the weather?' },
        { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
        { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.JPG?size=large' } },
        { fileData: { mimeType: 'image/*', fileUri: 'https://example.com/render' } }
      ]
    },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }] },
    {
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { temp: 21, sky: 'clear' } } },
        { functionResponse: { name: 'get_time', response: { content: '14:00' } } }
      ]
    },
    { role: 'user', parts: [{ text: 'Thanks' }] }
  ], 'roles, parts and function responses (merged, named after their calls)')
  t.same(sent.tools, [{
    functionDeclarations: [
      {
        name: 'get_weather',
        description: 'Current weather',
        parameters: { type: 'object', properties: { city: { type: 'string', minLength: 1 }, unit: { type: 'string', enum: ['c', 'f'], nullable: true }, kind: { enum: ['now'] } }, required: ['city'] }
      },
      { name: 'get_time' }
    ]
  }], 'schemas reduced to what Gemini accepts')
  t.same(sent.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } })
  t.same(sent.generationConfig, {
    temperature: 0.2,
    topP: 0.9,
    maxOutputTokens: 500,
    stopSequences: ['END'],
    candidateCount: 2,
    responseMimeType: 'application/json',
    responseSchema: { type: 'object', properties: { a: { type: 'string' } } },
    thinkingConfig: { thinkingBudget: 24576, includeThoughts: true }
  })
  t.equal(sent.safetySettings, undefined, 'no safety settings unless the channel sets them')

  for (const [choice, mode] of [['auto', 'AUTO'], ['none', 'NONE'], ['required', 'ANY']] as const) {
    const built = JSON.parse(String(gemini.buildRequest(channel, chat({ messages: [{ role: 'user', content: 'x' }], tools: body.tools, tool_choice: choice })).body))
    t.same(built.toolConfig, { functionCallingConfig: { mode } }, `tool_choice ${choice}`)
  }
  const plain = JSON.parse(String(gemini.buildRequest(channel, chat({ messages: [{ role: 'user', content: 'x' }], max_tokens: 7, response_format: { type: 'json_object' } })).body))
  t.same(plain.generationConfig, { maxOutputTokens: 7, responseMimeType: 'application/json' })
  t.equal(plain.systemInstruction, undefined)
})

t.test('keeps thought signatures of tool calls, with Google\'s placeholder for Gemini 3 when unknown', async (t) => {
  const gemini = adaptor()
  const channel: ChannelConfig = { id: 1, type: 24, key: KEY, baseUrl: '', other: '', organization: null, setting: {} }
  const messages = [
    { role: 'user', content: 'Weather?' },
    {
      role: 'assistant',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }
      ]
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    { role: 'tool', tool_call_id: 'call_2', content: 'rain' }
  ]
  const sentFor = (model: string, msgs: unknown[]) => JSON.parse(String(gemini.buildRequest(channel, chat({ messages: msgs }, false, model)).body)) as { contents: Array<{ parts: Array<Record<string, unknown>> }> }
  t.same(sentFor('gemini-3-flash-preview', messages).contents[1]?.parts.map((part) => part.thoughtSignature), ['skip_thought_signature_validator', undefined], 'the first call of a Gemini 3 turn')
  t.same(sentFor('gemini-2.5-flash', messages).contents[1]?.parts.map((part) => part.thoughtSignature), [undefined, undefined], 'not for 2.5')
  const signedCall = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'c2lnbmF0dXJl' } } }
  const signed = messages.map((message, i) => i === 1 ? { ...message, tool_calls: [signedCall, message.tool_calls?.[1]] } : message)
  t.same(sentFor('gemini-3-flash-preview', signed).contents[1]?.parts.map((part) => part.thoughtSignature), ['c2lnbmF0dXJl', undefined], 'the signature of the answer comes back')
})

t.test('adds the channel\'s safety settings when it sets some', async (t) => {
  const { up, channel, gemini } = await setup(t)
  up.answer((res) => json(res, { candidates: [], usageMetadata: USAGE }))
  const req = chat({ messages: [{ role: 'user', content: 'x' }] })
  await send(gemini.buildRequest({ ...channel, other: 'BLOCK_NONE' }, req))
  const settings = bodyOf(up.last()).safetySettings as Array<{ category: string, threshold: string }>
  t.ok(settings.length >= 4 && settings.every((s) => s.threshold === 'BLOCK_NONE' && s.category.startsWith('HARM_CATEGORY_')))
  const own = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }]
  await send(gemini.buildRequest({ ...channel, setting: { safety_settings: own } }, req))
  t.same(bodyOf(up.last()).safetySettings, own)
  const client = [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'OFF' }]
  await send(gemini.buildRequest({ ...channel, other: 'BLOCK_NONE' }, { endpoint: 'generate_content', format: 'gemini', model: MODEL, stream: false, body: { contents: [], safetySettings: client } }))
  t.same(bodyOf(up.last()).safetySettings, client, 'a Gemini client\'s own settings win')
})

t.test('converts an answer with thoughts, function calls and thinking usage', async (t) => {
  const { up, channel, gemini, convert } = await setup(t)
  up.answer((res) => json(res, {
    candidates: [{
      content: {
        role: 'model',
        parts: [
          { text: 'Checking both cities.', thought: true },
          { text: 'Let me look.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
          { functionCall: { name: 'get_weather', args: { city: 'Rome' } } }
        ]
      },
      finishReason: 'STOP',
      index: 0
    }],
    usageMetadata: USAGE,
    modelVersion: 'gemini-2.5-flash',
    responseId: 'abc'
  }))
  const req = chat({ messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }] })
  const converted = await convert(req, await send(gemini.buildRequest(channel, req)))
  t.equal(converted.status, 200)
  const answer = JSON.parse(String(converted.body))
  t.match(answer, { id: 'chatcmpl-abc', object: 'chat.completion', model: 'gemini-2.5-flash' })
  t.same(answer.choices, [{
    index: 0,
    message: {
      role: 'assistant',
      content: 'Let me look.',
      reasoning_content: 'Checking both cities.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'c2ln' } } },
        { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }
      ]
    },
    logprobs: null,
    finish_reason: 'tool_calls'
  }])
  t.same(answer.usage, { prompt_tokens: 30, completion_tokens: 35, total_tokens: 65, prompt_tokens_details: { cached_tokens: 8 }, completion_tokens_details: { reasoning_tokens: 25 } })
  t.same(converted.usage, { promptTokens: 30, completionTokens: 35, cachedTokens: 8 })
  t.equal(converted.text, 'Checking both cities.Let me look.{"city":"Paris"}{"city":"Rome"}')
})

t.test('maps finish reasons, and a blocked prompt to an empty content_filter answer', async (t) => {
  const { up, channel, gemini, convert } = await setup(t)
  const cases: Array<[string, string]> = [['STOP', 'stop'], ['MAX_TOKENS', 'length'], ['SAFETY', 'content_filter'], ['RECITATION', 'content_filter'],
    ['BLOCKLIST', 'content_filter'], ['PROHIBITED_CONTENT', 'content_filter'], ['SPII', 'content_filter'], ['OTHER', 'stop']]
  const req = chat({ messages: [{ role: 'user', content: 'x' }] })
  for (const [reason, expected] of cases) {
    up.answer((res) => json(res, { candidates: [{ content: { role: 'model', parts: [{ text: 'partial' }] }, finishReason: reason, index: 0 }], usageMetadata: USAGE }))
    const answer = JSON.parse(String((await convert(req, await send(gemini.buildRequest(channel, req)))).body))
    t.equal(answer.choices[0].finish_reason, expected, `${reason} → ${expected}`)
  }
  up.answer((res) => json(res, { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } }))
  const blocked = await convert(req, await send(gemini.buildRequest(channel, req)))
  t.equal(blocked.status, 200)
  const answer = JSON.parse(String(blocked.body))
  t.same(answer.choices, [{ index: 0, message: { role: 'assistant', content: '' }, logprobs: null, finish_reason: 'content_filter' }])
  t.same(blocked.usage, { promptTokens: 9, completionTokens: 0 })
})

t.test('a wrong key is refused by Google and disables the channel', async (t) => {
  const { up, channel, gemini } = await setup(t)
  up.answer((res) => json(res, {}))
  const res = await send(gemini.buildRequest({ ...channel, key: 'AIzaSyWrong' }, chat({ messages: [{ role: 'user', content: 'x' }] })))
  t.equal(res.status, 400)
  t.notOk(up.last().url.includes('key='), 'the key is never in the URL')
  const failure = gemini.classifyFailure(res.status, await res.text())
  t.same(failure, { action: 'disable', message: 'API key not valid. Please pass a valid API key.', code: 'API_KEY_INVALID' })
  t.equal(gemini.classifyFailure(401, googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.')).action, 'disable')
  t.match(gemini.classifyFailure(503, 'upstream connect error'), { action: 'retry' })
  t.match(gemini.classifyFailure(400, googleError(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified')), { action: 'client', code: 'INVALID_ARGUMENT' })
  t.match(await testChannel(gemini, { ...channel, key: 'AIzaSyWrong' }, MODEL), { ok: false, action: 'disable' })
})

t.test('streams text, thoughts, tool calls and usage as OpenAI chunks', async (t) => {
  const { up, channel, gemini } = await setup(t)
  const events = [
    { candidates: [{ content: { role: 'model', parts: [{ text: 'Thinking about ', thought: true }] }, index: 0 }], usageMetadata: { promptTokenCount: 30, totalTokenCount: 30 }, modelVersion: MODEL, responseId: 'r1' },
    { candidates: [{ content: { role: 'model', parts: [{ text: 'Paris.', thought: true }] }, index: 0 }], usageMetadata: { promptTokenCount: 30, totalTokenCount: 30 }, modelVersion: MODEL, responseId: 'r1' },
    { candidates: [{ content: { role: 'model', parts: [{ text: 'Météo à ' }] }, index: 0 }], usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 3, totalTokenCount: 58 }, modelVersion: MODEL, responseId: 'r1' },
    { candidates: [{ content: { role: 'model', parts: [{ text: 'Paris 🌤' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: USAGE, modelVersion: MODEL, responseId: 'r1' }
  ]
  up.answer(async (res, seen) => { await streamInPieces(res, sse(events), seen.url.includes('alt=sse') ? 7 : 1000) })
  const req = chat({ messages: [{ role: 'user', content: 'Weather?' }], reasoning_effort: 'low' }, true)
  const converter = gemini.createStream(channel, req)
  const relayed = await relay(await send(gemini.buildRequest(channel, req)), converter)
  t.equal(up.last().url, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse')
  t.same(bodyOf(up.last()).generationConfig, { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } })
  t.equal(relayed.error, undefined)
  const { chunks, done } = chunksOf(relayed.out)
  t.ok(done, 'ends with [DONE]')
  t.equal(relayed.tail, '', 'everything went out before the upstream closed')
  t.equal(relayed.finishedAfter.indexOf(true), relayed.finishedAfter.length - 1, 'finished only on the last chunk')
  t.same(chunks[0]?.choices[0]?.delta, { role: 'assistant', content: '' }, 'the role first')
  t.match(chunks[0], { id: 'chatcmpl-r1', object: 'chat.completion.chunk', model: MODEL })
  let content = ''
  let reasoning = ''
  const calls: unknown[] = []
  let finish: string | undefined
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? ''
      reasoning += choice.delta.reasoning_content ?? ''
      calls.push(...(choice.delta.tool_calls ?? []))
      if (choice.finish_reason !== null) finish = choice.finish_reason
    }
  }
  t.equal(content, 'Météo à Paris 🌤')
  t.equal(reasoning, 'Thinking about Paris.')
  t.same(calls, [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'c2ln' } } }], 'one whole call')
  t.equal(finish, 'tool_calls')
  t.same(chunks.at(-1)?.usage, { prompt_tokens: 30, completion_tokens: 35, total_tokens: 65, prompt_tokens_details: { cached_tokens: 8 }, completion_tokens_details: { reasoning_tokens: 25 } })
  t.same(chunks.at(-1)?.choices, [])
  t.same(converter.usage(), { promptTokens: 30, completionTokens: 35, cachedTokens: 8 })
  t.equal(relayed.text, 'Thinking about Paris.Météo à Paris 🌤{"city":"Paris"}')
})

t.test('a stream with two candidates finishes after both; a blocked prompt finishes at once', async (t) => {
  const { up, channel, gemini } = await setup(t)
  const events = [
    { candidates: [{ content: { role: 'model', parts: [{ text: 'A' }] }, index: 0 }, { content: { role: 'model', parts: [{ text: 'B' }] }, index: 1 }] },
    { candidates: [{ content: { role: 'model', parts: [{ text: '!' }] }, finishReason: 'STOP', index: 0 }] },
    { candidates: [{ content: { role: 'model', parts: [{ text: '?' }] }, finishReason: 'MAX_TOKENS', index: 1 }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 4, totalTokenCount: 8 } }
  ]
  up.answer(async (res) => { await streamInPieces(res, sse(events), 5) })
  const req = chat({ messages: [{ role: 'user', content: 'x' }], n: 2 }, true)
  const converter = gemini.createStream(channel, req)
  const relayed = await relay(await send(gemini.buildRequest(channel, req)), converter)
  t.equal(relayed.finishedAfter.indexOf(true), relayed.finishedAfter.length - 1, 'finished only once both candidates finished')
  const { chunks, done } = chunksOf(relayed.out)
  t.ok(done)
  const texts = ['', '']
  const finishes: Array<string | undefined> = []
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      texts[choice.index] += choice.delta.content ?? ''
      if (choice.finish_reason !== null) finishes[choice.index] = choice.finish_reason
    }
  }
  t.same(texts, ['A!', 'B?'])
  t.same(finishes, ['stop', 'length'])
  t.same(converter.usage(), { promptTokens: 4, completionTokens: 4 })

  up.answer(async (res) => { await streamInPieces(res, sse([{ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } }]), 1000) })
  const blockedReq = chat({ messages: [{ role: 'user', content: 'x' }] }, true)
  const blocked = gemini.createStream(channel, blockedReq)
  const out = await relay(await send(gemini.buildRequest(channel, blockedReq)), blocked)
  t.ok(blocked.finished())
  const summary = chunksOf(out.out)
  t.ok(summary.done)
  t.ok(summary.chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'content_filter'))
})

t.test('a stream cut before its finishReason is not finished', async (t) => {
  const { up, channel, gemini } = await setup(t)
  const text = sse([
    { candidates: [{ content: { role: 'model', parts: [{ text: 'Hello ' }] }, index: 0 }], usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } },
    { candidates: [{ content: { role: 'model', parts: [{ text: 'world' }] }, index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 } }
  ])
  up.answer(async (res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' })
    await write(res, Buffer.from(text))
    res.end()
  })
  const req = chat({ messages: [{ role: 'user', content: 'x' }] }, true)
  const converter = gemini.createStream(channel, req)
  const relayed = await relay(await send(gemini.buildRequest(channel, req)), converter)
  t.equal(relayed.error, undefined, 'the upstream ended normally, but without a finishReason')
  t.notOk(converter.finished())
  t.equal(converter.usage(), undefined)
  const { chunks, done } = chunksOf(relayed.out + relayed.tail)
  t.notOk(done)
  t.equal(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Hello world')
})

t.test('passes a Gemini client\'s request and answers through', async (t) => {
  const { up, channel, gemini, convert } = await setup(t)
  const body = { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], generationConfig: { temperature: 1 }, someFutureField: { x: 1 } }
  const answer = { candidates: [{ content: { role: 'model', parts: [{ text: 'Hello!' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: USAGE, modelVersion: 'gemini-2.5-pro' }
  up.answer((res) => json(res, answer))
  const req: RelayRequest = { endpoint: 'generate_content', format: 'gemini', model: 'gemini-2.5-pro', stream: false, body }
  const converted = await convert(req, await send(gemini.buildRequest(channel, req)))
  t.equal(up.last().url, '/v1beta/models/gemini-2.5-pro:generateContent', 'the mapped model in the URL')
  t.same(bodyOf(up.last()), body, 'the body as the client wrote it')
  t.same(JSON.parse(String(converted.body)), answer, 'the answer unchanged')
  t.same(converted.usage, { promptTokens: 30, completionTokens: 35, cachedTokens: 8 })
  t.equal(converted.text, 'Hello!')

  const events = sse([
    { candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }], usageMetadata: { promptTokenCount: 30, totalTokenCount: 30 } },
    { candidates: [{ content: { role: 'model', parts: [{ text: 'lo ✓' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: USAGE }
  ])
  up.answer(async (res) => { await streamInPieces(res, events, 6) })
  const streamed: RelayRequest = { ...req, stream: true }
  const converter = gemini.createStream(channel, streamed)
  const relayed = await relay(await send(gemini.buildRequest(channel, streamed)), converter)
  t.equal(up.last().url, '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse')
  t.equal(relayed.out + relayed.tail, events, 'the events unchanged')
  t.equal(relayed.finishedAfter.indexOf(true), relayed.finishedAfter.length - 1)
  t.same(converter.usage(), { promptTokens: 30, completionTokens: 35, cachedTokens: 8 })
  t.equal(relayed.text, 'Hello ✓')
})

t.test('lists the models that generate content, and tests the channel', async (t) => {
  const { up, channel, gemini } = await setup(t)
  up.answer((res, seen) => {
    if (seen.method === 'GET') {
      json(res, {
        models: [
          { name: 'models/gemini-2.5-flash', supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent'] },
          { name: 'models/gemini-embedding-001', supportedGenerationMethods: ['embedContent'] },
          { name: 'models/gemini-2.5-pro', supportedGenerationMethods: ['generateContent'] }
        ]
      })
    } else {
      json(res, { candidates: [{ content: { role: 'model', parts: [{ text: 'Hi!' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 } })
    }
  })
  t.same(await fetchModels(gemini, channel), ['gemini-2.5-flash', 'gemini-2.5-pro'])
  t.equal(up.last().url, '/v1beta/models?pageSize=1000')
  t.equal(up.last().headers['x-goog-api-key'], KEY)
  t.match(await testChannel(gemini, channel, MODEL), { ok: true })
  t.same(bodyOf(up.last()), { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 16 } })
})

t.test('passes Gemini clients\' embedContent and batchEmbedContents through, the batch naming the channel\'s model', async (t) => {
  const { up, channel, gemini, convert } = await setup(t)
  t.ok(gemini.supports('embed_content', 'gemini'))
  t.ok(gemini.supports('batch_embed_contents', 'gemini'))
  t.notOk(gemini.supports('embed_content', 'openai'))
  up.answer((res, seen) => {
    if (seen.url.endsWith(':embedContent')) json(res, { embedding: { values: [0.1, 0.2] } })
    else json(res, { embeddings: [{ values: [1, 2] }, { values: [3, 4] }] })
  })
  const single: RelayRequest = { endpoint: 'embed_content', format: 'gemini', model: 'models/gemini-embedding-001', stream: false, body: { content: { parts: [{ text: 'hi' }] }, outputDimensionality: 2, x_unknown: 1 } }
  const one = await convert(single, await send(gemini.buildRequest(channel, single)))
  t.equal(up.last().url, '/v1beta/models/gemini-embedding-001:embedContent')
  t.equal(up.last().headers['x-goog-api-key'], KEY)
  t.same(bodyOf(up.last()), single.body, 'the body unchanged')
  t.same(JSON.parse(one.body.toString()), { embedding: { values: [0.1, 0.2] } })
  t.equal(one.usage, undefined, 'Google reports no tokens: the gateway counts them')

  const batch: RelayRequest = {
    endpoint: 'batch_embed_contents',
    format: 'gemini',
    model: 'gemini-embedding-001',
    stream: false,
    body: { requests: [{ model: 'models/client-alias', content: { parts: [{ text: 'a' }] }, taskType: 'RETRIEVAL_QUERY' }, { model: 'models/client-alias', content: { parts: [{ text: 'b' }] } }] }
  }
  const many = await convert(batch, await send(gemini.buildRequest(channel, batch)))
  t.equal(up.last().url, '/v1beta/models/gemini-embedding-001:batchEmbedContents')
  t.same(bodyOf(up.last()), {
    requests: [
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] }, taskType: 'RETRIEVAL_QUERY' },
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] } }
    ]
  })
  t.same(JSON.parse(many.body.toString()), { embeddings: [{ values: [1, 2] }, { values: [3, 4] }] })
  up.answer((res) => json(res, { embeddings: [{ values: [1] }], usageMetadata: { promptTokenCount: 4 } }))
  t.same((await convert(batch, await send(gemini.buildRequest(channel, batch)))).usage, { promptTokens: 4, completionTokens: 0 }, 'token counts when Google gives some')
})
