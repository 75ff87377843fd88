// Every registered adaptor against a real HTTP server on 127.0.0.1 speaking its provider's
// protocol: requests go over the wire exactly as the adaptor built them.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import {
  adaptorFor,
  CHANNEL_TYPE_NAMES,
  defaultModelsByType,
  ProviderError,
  registeredTypes,
  type ChannelConfig,
  type Endpoint,
  type FailureAction,
  type OpenAIEndpoint,
  type ProviderAdaptor,
  type RelayRequest,
  type StreamConverter,
  type UpstreamRequest,
  type UrlTarget,
  type Usage
} from '../src/index.js'

interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: Buffer
}

type Handler = (res: ServerResponse, seen: Seen) => void | Promise<void>

interface Upstream {
  origin: string
  seen: Seen[]
  /** Sets how the server answers the next requests. */
  answer: (handler: Handler) => void
  last: () => Seen
}

async function startUpstream (t: Test): Promise<Upstream> {
  const seen: Seen[] = []
  let handler: Handler = (res) => { res.writeHead(500).end() }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }
      seen.push(entry)
      Promise.resolve(handler(res, entry)).catch((err: unknown) => res.destroy(err as Error))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    answer: (next) => { handler = next },
    last: () => {
      const entry = seen.at(-1)
      if (entry === undefined) throw new Error('the upstream saw no request')
      return entry
    }
  }
}

function json (res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body))
}

function write (res: ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => res.write(chunk, (err) => { if (err) reject(err); else resolve() }))
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 1))

/**
 * Writes `text` as an SSE answer: the bytes inside `slow` ranges one at a time with a pause after
 * each (so the client reads them one by one: mid-line, mid-character), the rest in larger pieces.
 */
async function writeAwkwardly (res: ServerResponse, text: string, slow: Array<[number, number]>): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' })
  const bytes = Buffer.from(text)
  let at = 0
  for (const [from, to] of slow) {
    if (from > at) await write(res, bytes.subarray(at, from))
    for (let i = from; i < to; i++) {
      await write(res, bytes.subarray(i, i + 1))
      await tick()
    }
    at = Math.max(at, to)
  }
  if (at < bytes.length) await write(res, bytes.subarray(at))
  res.end()
}

/** Byte ranges around the first occurrence of `marker` (by bytes) and over the last `tail` bytes. */
function slowRanges (text: string, marker: string, tail: number): Array<[number, number]> {
  const bytes = Buffer.from(text)
  const start = bytes.indexOf(marker)
  return [[Math.max(0, start - 6), start + Buffer.byteLength(marker) + 6], [bytes.length - tail, bytes.length]]
}

async function send (up: UpstreamRequest): Promise<Response> {
  return await fetch(up.url, { method: up.method, headers: up.headers, body: up.body })
}

async function bytesOf (res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer())
}

function parsed (body: Buffer): Record<string, unknown> {
  return JSON.parse(body.toString('utf8')) as Record<string, unknown>
}

interface Relayed {
  chunks: Uint8Array[]
  out: string
  tail: string
  text: string
  /** finished() after each chunk. */
  finishedAfter: boolean[]
  error: unknown
}

/** Reads the upstream answer as the gateway does: chunk by chunk through the converter. */
async function relay (res: Response, converter: StreamConverter): Promise<Relayed> {
  const relayed: Relayed = { chunks: [], out: '', tail: '', text: '', finishedAfter: [], error: undefined }
  if (res.body === null) throw new Error('no body')
  const reader = res.body.getReader()
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      relayed.chunks.push(next.value)
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

function splitsACharacter (chunks: Uint8Array[]): boolean {
  const strict = new TextDecoder('utf-8', { fatal: true })
  return chunks.some((chunk) => {
    try {
      strict.decode(chunk)
      return false
    } catch {
      return true
    }
  })
}

// The provider protocols.

const V1_PATHS: Record<UrlTarget, string> = {
  chat: '/v1/chat/completions',
  completions: '/v1/completions',
  responses: '/v1/responses',
  embeddings: '/v1/embeddings',
  images_generations: '/v1/images/generations',
  images_edits: '/v1/images/edits',
  audio_speech: '/v1/audio/speech',
  audio_transcriptions: '/v1/audio/transcriptions',
  audio_translations: '/v1/audio/translations',
  moderations: '/v1/moderations',
  rerank: '/v1/rerank',
  models: '/v1/models'
}

const AZURE_VERSION = '2024-10-21'

function azurePath (target: UrlTarget, model: string): string {
  if (target === 'models') return `/openai/models?api-version=${AZURE_VERSION}`
  if (target === 'responses') return '/openai/responses?api-version=2025-03-01-preview'
  const suffix = V1_PATHS[target].slice('/v1'.length)
  return `/openai/deployments/${model.replaceAll('.', '')}${suffix}?api-version=${AZURE_VERSION}`
}

/** Where a stream reports usage: a last chunk without choices (include_usage), inside the last choice (Moonshot), beside the finish (Mistral). */
type StreamUsageStyle = 'usage-chunk' | 'in-last-choice' | 'with-finish'

interface Protocol {
  path: (target: UrlTarget, model: string) => string
  other: string
  auth: 'bearer' | 'api-key'
  streamUsage: StreamUsageStyle
  /** What a streamed chat request carries: the client's stream_options plus include_usage, or none. */
  streamOptions: 'merged' | 'stripped'
  usageWire: Record<string, unknown>
}

const USAGE: Usage = { promptTokens: 12, completionTokens: 7, cachedTokens: 4 }

const openAIWire = (over: Partial<Protocol> = {}): Protocol => ({
  path: (target) => V1_PATHS[target],
  other: '',
  auth: 'bearer',
  streamUsage: 'usage-chunk',
  streamOptions: 'merged',
  usageWire: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 4 } },
  ...over
})

const PROTOCOLS: Record<number, Protocol> = {
  1: openAIWire(),
  3: openAIWire({ path: azurePath, other: AZURE_VERSION, auth: 'api-key' }),
  4: openAIWire(),
  // A bare origin: the OpenAI paths are appended (full URLs are covered below).
  8: openAIWire(),
  19: openAIWire(),
  25: openAIWire({ streamUsage: 'in-last-choice', usageWire: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, cached_tokens: 4, prompt_tokens_details: { cached_tokens: 4 } } }),
  31: openAIWire(),
  40: openAIWire(),
  42: openAIWire({ streamUsage: 'with-finish', streamOptions: 'stripped' }),
  43: openAIWire({ usageWire: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_cache_hit_tokens: 4, prompt_cache_miss_tokens: 8 } })
}

const MODEL = 'gpt-4.1-mini'

function channelFor (type: number, protocol: Protocol, origin: string): ChannelConfig {
  return { id: type, type, key: `sk-test-${type}`, baseUrl: origin, other: protocol.other, organization: 'org-test', setting: {} }
}

function relayRequest (endpoint: Endpoint, body: Record<string, unknown>, stream = false): RelayRequest {
  return { endpoint, format: 'openai', model: MODEL, stream, body }
}

function checkAuth (t: Test, protocol: Protocol, channel: ChannelConfig, seen: Seen): void {
  if (protocol.auth === 'bearer') {
    t.equal(seen.headers.authorization, `Bearer ${channel.key}`, 'bearer key')
    t.notOk(seen.headers['api-key'], 'no api-key header')
  } else {
    t.equal(seen.headers['api-key'], channel.key, 'api-key header')
    t.notOk(seen.headers.authorization, 'no bearer key')
  }
  t.equal(seen.headers['openai-organization'], channel.type === 1 ? 'org-test' : undefined, 'organization header only for OpenAI')
}

function chatStream (protocol: Protocol): { text: string, whole: number, events: string[] } {
  const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: MODEL }
  const delta = (content: string) => ({ ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] })
  const finish = { index: 0, delta: {}, finish_reason: 'stop' }
  const events: unknown[] = [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    delta('Héllo, '),
    delta('wörld 你好 🎉')
  ]
  if (protocol.streamUsage === 'usage-chunk') events.push({ ...base, choices: [finish] }, { ...base, choices: [], usage: protocol.usageWire })
  if (protocol.streamUsage === 'in-last-choice') events.push({ ...base, choices: [{ ...finish, usage: protocol.usageWire }] })
  if (protocol.streamUsage === 'with-finish') events.push({ ...base, choices: [finish], usage: protocol.usageWire })
  const lines = events.map((event) => `data: ${JSON.stringify(event)}\n\n`)
  lines.push('data: [DONE]\n\n')
  const first = lines[0] ?? ''
  // A keep-alive comment, which the client must not see.
  const text = first + ': ping\n\n' + lines.slice(1).join('')
  return { text, whole: Buffer.byteLength(first) + 3, events: lines }
}

function responsesStream (): { text: string } {
  const response = { id: 'resp_1', object: 'response', model: MODEL, output: [] }
  const events: Array<[string, unknown]> = [
    ['response.created', { type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress', usage: null } }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Grüße ' }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 2, item_id: 'msg_1', output_index: 0, content_index: 0, delta: '🌍' }],
    ['response.completed', {
      type: 'response.completed',
      sequence_number: 3,
      response: { ...response, status: 'completed', usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 2 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 } }
    }]
  ]
  const blocks = events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
  return { text: blocks.join('') }
}

const ERROR_CASES: Array<{ what: string, status: number, body: string, action: string, code?: string }> = [
  {
    what: '400 invalid parameter',
    status: 400,
    body: JSON.stringify({ error: { message: "Invalid value for 'temperature': must be at most 2.", type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } }),
    action: 'client',
    code: 'invalid_value'
  },
  {
    what: '401 wrong key',
    status: 401,
    body: JSON.stringify({ error: { message: 'Incorrect API key provided: sk-proj-abcd****************************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }),
    action: 'disable',
    code: 'invalid_api_key'
  },
  {
    what: '403 region not supported',
    status: 403,
    body: JSON.stringify({ error: { message: 'Country, region, or territory not supported', type: 'request_forbidden', param: null, code: 'unsupported_country_region_territory' } }),
    action: 'disable',
    code: 'unsupported_country_region_territory'
  },
  {
    what: '404 unknown model',
    status: 404,
    body: JSON.stringify({ error: { message: 'The model `gpt-9` does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' } }),
    action: 'client',
    code: 'model_not_found'
  },
  {
    what: '429 rate limit (its message links to the billing page)',
    status: 429,
    body: JSON.stringify({ error: { message: 'Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Add a payment method at https://platform.openai.com/account/billing to increase your rate limit.', type: 'requests', param: null, code: 'rate_limit_exceeded' } }),
    action: 'retry',
    code: 'rate_limit_exceeded'
  },
  {
    what: '429 insufficient_quota',
    status: 429,
    body: JSON.stringify({ error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } }),
    action: 'disable',
    code: 'insufficient_quota'
  },
  {
    what: '403 insufficient_quota',
    status: 403,
    body: JSON.stringify({ error: { message: 'You exceeded your current quota.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } }),
    action: 'disable',
    code: 'insufficient_quota'
  },
  {
    what: '400 billing not active',
    status: 400,
    body: JSON.stringify({ error: { message: 'Your account is not active, please check your billing details on our website.', type: 'billing_not_active', param: null, code: 'billing_not_active' } }),
    action: 'disable',
    code: 'billing_not_active'
  },
  { what: '500 HTML page', status: 500, body: '<html><body>Internal error at http://10.0.0.3:8080/v1 key=sk-live-0123456789</body></html>', action: 'retry' },
  {
    what: '503 overloaded',
    status: 503,
    body: JSON.stringify({ error: { message: 'The server is overloaded or not ready yet.', type: 'server_error', param: null, code: null } }),
    action: 'retry',
    code: 'server_error'
  }
]

// Native protocols: adaptors that convert OpenAI chat clients to their provider's own protocol.

/** What an OpenAI chat client received from a converted stream. */
interface ChunkSummary {
  content: string
  reasoning: string
  toolCalls: Array<{ id: string, name: string, arguments: string }>
  finish: unknown
  usage: unknown
  /** The first delta carried the role. */
  roleFirst: boolean
  done: boolean
}

/** Reads OpenAI chat.completion.chunk events as a client would. */
function readChunks (out: string): ChunkSummary {
  const summary: ChunkSummary = { content: '', reasoning: '', toolCalls: [], finish: null, usage: undefined, roleFirst: false, done: false }
  const events = out.split('\n\n').filter((event) => event !== '')
  events.forEach((event, i) => {
    if (!event.startsWith('data: ')) throw new Error(`not a data event: ${event}`)
    const data = event.slice('data: '.length)
    if (data === '[DONE]') {
      summary.done = i === events.length - 1
      return
    }
    const chunk = JSON.parse(data) as { object: string, usage?: unknown, choices: Array<{ delta: Record<string, unknown>, finish_reason: unknown }> }
    if (chunk.object !== 'chat.completion.chunk') throw new Error(`not a chunk: ${data}`)
    if (chunk.usage !== undefined) summary.usage = chunk.usage
    for (const choice of chunk.choices) {
      const delta = choice.delta
      if (i === 0) summary.roleFirst = delta.role === 'assistant'
      if (typeof delta.content === 'string') summary.content += delta.content
      if (typeof delta.reasoning_content === 'string') summary.reasoning += delta.reasoning_content
      for (const call of (delta.tool_calls ?? []) as Array<{ index: number, id?: string, function?: { name?: string, arguments?: string } }>) {
        const known = summary.toolCalls[call.index] ?? (summary.toolCalls[call.index] = { id: '', name: '', arguments: '' })
        known.id += call.id ?? ''
        known.name += call.function?.name ?? ''
        known.arguments += call.function?.arguments ?? ''
      }
      if (choice.finish_reason !== null) summary.finish = choice.finish_reason
    }
  })
  return summary
}

/** A provider's own protocol, as its local test server speaks it. */
interface NativeProtocol {
  /** Path of a chat request (as the server sees it), and of the model list. */
  chatPath: (model: string, stream: boolean) => string
  modelsPath: string
  /** Whether the request carries the channel's credential (header, signature or token) as the provider checks it. */
  authorized: (seen: Seen, channel: ChannelConfig) => boolean
  /** The provider's answer to a request without a valid credential. */
  refuse: (res: ServerResponse) => void
  /** The non-streamed answer to `{messages: [{role: 'user', content: 'hi'}]}`: 'Hello there', NATIVE_USAGE. */
  answer: unknown
  /** A stream answering 'Héllo, wörld 你好 🎉' with NATIVE_USAGE, and the byte range to feed slowly. */
  stream: () => string
  /** The non-streamed and streamed answers calling get_weather({"city":"Paris"}) with id call_1. */
  toolAnswer: unknown
  toolStream: () => string
  /** Checks the provider's form of a chat request with a system prompt, a user turn and the get_weather tool. */
  checkChatBody: (t: Test, body: Record<string, unknown>) => void
  /** The provider's model list naming model-a and model-b. */
  models: unknown
  errors: Array<{ what: string, status: number, body: string, action: FailureAction, code?: string }>
}

/** Usage every native fixture reports (prompt 12 of which 4 cached, completion 7). */
const NATIVE_USAGE: Usage = { promptTokens: 12, completionTokens: 7, cachedTokens: 4 }

const anthropicEvents = (events: Array<Record<string, unknown>>): string =>
  events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('')

const anthropicMessage = (content: unknown[], stopReason: string) => ({
  id: 'msg_1', type: 'message', role: 'assistant', model: MODEL, content, stop_reason: stopReason, stop_sequence: null,
  usage: { input_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 4, output_tokens: 7 }
})

function anthropicStream (blocks: Array<{ start: Record<string, unknown>, deltas: Array<Record<string, unknown>> }>, stopReason: string): string {
  const events: Array<Record<string, unknown>> = [
    { type: 'message_start', message: { ...anthropicMessage([], stopReason), stop_reason: null, usage: { input_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 4, output_tokens: 1 } } }
  ]
  blocks.forEach((block, index) => {
    events.push({ type: 'content_block_start', index, content_block: block.start })
    if (index === 0) events.push({ type: 'ping' })
    for (const delta of block.deltas) events.push({ type: 'content_block_delta', index, delta })
    events.push({ type: 'content_block_stop', index })
  })
  events.push({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 7 } }, { type: 'message_stop' })
  return anthropicEvents(events)
}

const anthropicError = (type: string, message: string, details?: unknown) =>
  JSON.stringify({ type: 'error', error: { type, message, ...(details === undefined ? {} : { details }) }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' })

const GEMINI_USAGE = { promptTokenCount: 12, candidatesTokenCount: 7, cachedContentTokenCount: 4, totalTokenCount: 19 }

const geminiAnswer = (parts: unknown[], finishReason: string) => ({
  candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }], usageMetadata: GEMINI_USAGE, modelVersion: MODEL, responseId: 'resp_1'
})

/** Gemini's `alt=sse` framing: one GenerateContentResponse per `data:` event, CRLF line ends. */
const geminiEvents = (events: unknown[]): string => events.map((event) => `data: ${JSON.stringify(event)}\r\n\r\n`).join('')

const geminiError = (code: number, status: string, message: string, reason?: string) => JSON.stringify({
  error: { code, message, status, ...(reason === undefined ? {} : { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }] }) }
})

const NATIVE: Record<number, NativeProtocol> = {
  14: {
    chatPath: () => '/v1/messages',
    modelsPath: '/v1/models?limit=1000',
    authorized: (seen, channel) => seen.headers['x-api-key'] === channel.key && seen.headers['anthropic-version'] === '2023-06-01' && seen.headers.authorization === undefined,
    refuse: (res) => {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end(anthropicError('authentication_error', 'invalid x-api-key'))
    },
    answer: anthropicMessage([{ type: 'text', text: 'Hello there' }], 'end_turn'),
    stream: () => anthropicStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Héllo, ' }, { type: 'text_delta', text: 'wörld 你好 🎉' }] }], 'end_turn'),
    toolAnswer: anthropicMessage([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }], 'tool_use'),
    toolStream: () => anthropicStream([{
      start: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} },
      deltas: [{ type: 'input_json_delta', partial_json: '' }, { type: 'input_json_delta', partial_json: '{"city": ' }, { type: 'input_json_delta', partial_json: '"Paris"}' }]
    }], 'tool_use'),
    checkChatBody: (t, body) => {
      t.same(body.system, [{ type: 'text', text: 'Be brief.' }], 'system prompt')
      t.same(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }], 'messages')
      t.same(body.tools, [{ name: 'get_weather', description: 'Current weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }], 'tools')
      t.equal(body.max_tokens, 4096, 'the default max_tokens Anthropic requires')
    },
    models: { data: [{ type: 'model', id: 'model-a', display_name: 'Model A', created_at: '2025-05-14T00:00:00Z' }, { type: 'model', id: 'model-b', display_name: 'Model B', created_at: '2025-05-14T00:00:00Z' }], has_more: false, first_id: 'model-a', last_id: 'model-b' },
    errors: [
      { what: '401 invalid key', status: 401, body: anthropicError('authentication_error', 'invalid x-api-key'), action: 'disable', code: 'authentication_error' },
      { what: '403 permission', status: 403, body: anthropicError('permission_error', 'Your API key does not have permission to use the specified resource.'), action: 'disable', code: 'permission_error' },
      { what: '402 billing', status: 402, body: anthropicError('billing_error', 'Your account has a billing issue.'), action: 'disable', code: 'billing_error' },
      { what: '400 credit balance too low', status: 400, body: anthropicError('invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'), action: 'disable', code: 'invalid_request_error' },
      { what: '429 rate limit', status: 429, body: anthropicError('rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute.'), action: 'retry', code: 'rate_limit_error' },
      { what: '429 monthly spend limit', status: 429, body: anthropicError('rate_limit_error', 'You have reached your monthly spend limit.', { error_code: 'enforced_spend_limit_reached' }), action: 'disable', code: 'enforced_spend_limit_reached' },
      { what: '500 api error', status: 500, body: anthropicError('api_error', 'Internal server error'), action: 'retry', code: 'api_error' },
      { what: '529 overloaded', status: 529, body: anthropicError('overloaded_error', 'Overloaded'), action: 'retry', code: 'overloaded_error' },
      { what: '400 bad request', status: 400, body: anthropicError('invalid_request_error', 'messages: roles must alternate between "user" and "assistant"'), action: 'client', code: 'invalid_request_error' },
      { what: '404 unknown model', status: 404, body: anthropicError('not_found_error', 'model: claude-9'), action: 'client', code: 'not_found_error' },
      { what: '413 too large', status: 413, body: anthropicError('request_too_large', 'Request exceeds the maximum allowed number of bytes.'), action: 'client', code: 'request_too_large' }
    ]
  },
  24: {
    chatPath: (model, stream) => `/v1beta/models/${model}${stream ? ':streamGenerateContent?alt=sse' : ':generateContent'}`,
    modelsPath: '/v1beta/models?pageSize=1000',
    authorized: (seen, channel) => seen.headers['x-goog-api-key'] === channel.key && seen.headers.authorization === undefined && !seen.url.includes('key='),
    refuse: (res) => {
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(geminiError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'))
    },
    answer: geminiAnswer([{ text: 'Hello there' }], 'STOP'),
    stream: () => geminiEvents([
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Héllo, ' }] }, index: 0 }], usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 }, modelVersion: MODEL, responseId: 'resp_1' },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'wörld 你好 🎉' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: GEMINI_USAGE, modelVersion: MODEL, responseId: 'resp_1' }
    ]),
    toolAnswer: geminiAnswer([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }], 'STOP'),
    toolStream: () => geminiEvents([
      { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] }, finishReason: 'STOP', index: 0 }], usageMetadata: GEMINI_USAGE, modelVersion: MODEL, responseId: 'resp_1' }
    ]),
    checkChatBody: (t, body) => {
      t.same(body.systemInstruction, { parts: [{ text: 'Be brief.' }] }, 'system instruction')
      t.same(body.contents, [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }], 'contents')
      t.same(body.tools, [{ functionDeclarations: [{ name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] }], 'tools')
      t.equal(body.model, undefined, 'the model goes in the URL')
    },
    models: {
      models: [
        { name: 'models/model-a', displayName: 'Model A', supportedGenerationMethods: ['generateContent', 'countTokens'] },
        { name: 'models/embedding-x', displayName: 'Embedding', supportedGenerationMethods: ['embedContent'] },
        { name: 'models/model-b', displayName: 'Model B', supportedGenerationMethods: ['generateContent'] }
      ]
    },
    errors: [
      { what: '400 invalid key', status: 400, body: geminiError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'), action: 'disable', code: 'API_KEY_INVALID' },
      { what: '403 permission denied', status: 403, body: geminiError(403, 'PERMISSION_DENIED', 'Your API key was reported as leaked. Please use another API key.'), action: 'disable', code: 'PERMISSION_DENIED' },
      { what: '400 billing required', status: 400, body: geminiError(400, 'FAILED_PRECONDITION', 'Gemini API free tier is not available in your country. Please enable billing on your project in Google AI Studio.'), action: 'disable', code: 'FAILED_PRECONDITION' },
      { what: '429 quota', status: 429, body: geminiError(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details.'), action: 'retry', code: 'RESOURCE_EXHAUSTED' },
      { what: '500 internal', status: 500, body: geminiError(500, 'INTERNAL', 'An internal error has occurred.'), action: 'retry', code: 'INTERNAL' },
      { what: '503 unavailable', status: 503, body: geminiError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'), action: 'retry', code: 'UNAVAILABLE' },
      { what: '400 invalid argument', status: 400, body: geminiError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.'), action: 'client', code: 'INVALID_ARGUMENT' },
      { what: '404 unknown model', status: 404, body: geminiError(404, 'NOT_FOUND', 'models/gemini-9 is not found for API version v1beta.'), action: 'client', code: 'NOT_FOUND' }
    ]
  }
}

const WEATHER_TOOL = { type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }

const OPENAI_ENDPOINTS: Endpoint[] = [
  'chat', 'completions', 'embeddings', 'images_generations', 'images_edits', 'audio_speech',
  'audio_transcriptions', 'audio_translations', 'moderations', 'rerank', 'responses'
]

t.test('every registered type has a protocol fixture and a name', async (t) => {
  t.ok(registeredTypes().length >= 10)
  t.same(registeredTypes().filter((type) => PROTOCOLS[type] === undefined && NATIVE[type] === undefined), [], 'no adaptor without a fixture')
  for (const type of registeredTypes()) t.equal(adaptorFor(type)?.name, CHANNEL_TYPE_NAMES[type], `type ${type} is named as in the type list`)
})

for (const type of registeredTypes()) {
  const protocol = PROTOCOLS[type]
  const found = adaptorFor(type)
  if (protocol === undefined || found === undefined) continue
  const adaptor: ProviderAdaptor = found

  t.test(`${adaptor.name} (type ${type})`, async (t) => {
    const up = await startUpstream(t)
    const channel = channelFor(type, protocol, up.origin)

    t.test('serves OpenAI clients on every OpenAI endpoint, and nothing else', async (t) => {
      for (const endpoint of OPENAI_ENDPOINTS) t.ok(adaptor.supports(endpoint, 'openai'), endpoint)
      t.notOk(adaptor.supports('messages', 'openai'))
      t.notOk(adaptor.supports('generate_content', 'openai'))
      t.notOk(adaptor.supports('chat', 'anthropic'))
      t.notOk(adaptor.supports('chat', 'gemini'))
      t.throws(() => adaptor.buildRequest(channel, { ...relayRequest('chat', {}), format: 'anthropic' }), ProviderError)
    })

    t.test('sends a chat request to the right path with the right key, the model replaced and unknown fields untouched', async (t) => {
      up.answer((res) => json(res, 200, {}))
      const body = { model: 'client-alias', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, x_vendor: { nested: [1, 'two', null] }, logit_bias: { 50256: -100 } }
      const built = adaptor.buildRequest(channel, relayRequest('chat', body))
      t.equal(built.method, 'POST')
      const res = await send(built)
      t.equal(res.status, 200)
      const seen = up.last()
      t.equal(seen.method, 'POST')
      t.equal(seen.url, protocol.path('chat', MODEL))
      t.match(seen.headers['content-type'], /^application\/json/)
      checkAuth(t, protocol, channel, seen)
      t.same(parsed(seen.body), { ...body, model: MODEL }, 'the client body with the upstream model')
      t.notOk('stream_options' in parsed(seen.body), 'no stream_options on a non-streamed request')
    })

    t.test('converts a non-streamed chat answer with its usage and text', async (t) => {
      const answer = {
        id: 'chatcmpl-2', object: 'chat.completion', created: 1_700_000_000, model: MODEL,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, logprobs: null, finish_reason: 'stop' }],
        usage: protocol.usageWire,
        system_fingerprint: 'fp_1'
      }
      up.answer((res) => json(res, 200, answer))
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
      const res = await send(adaptor.buildRequest(channel, req))
      const raw = await bytesOf(res)
      const converted = adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', raw)
      t.equal(converted.status, 200)
      t.match(converted.contentType, /^application\/json/)
      t.same(Buffer.from(converted.body), raw, 'the answer is forwarded unchanged')
      t.same(converted.usage, USAGE)
      t.equal(converted.text, 'Hello there')
    })

    t.test('relays a chat stream that arrives in awkward chunks', async (t) => {
      const stream = chatStream(protocol)
      up.answer((res) => writeAwkwardly(res, stream.text, [[stream.whole - 8, stream.whole + 4], ...slowRanges(stream.text, '你好 🎉', 16)]))
      const client = { messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_obfuscation: false } }
      const req = relayRequest('chat', client, true)
      const res = await send(adaptor.buildRequest(channel, req))
      const relayed = await relay(res, adaptor.createStream(channel, req))

      const sent = parsed(up.last().body)
      if (protocol.streamOptions === 'merged') t.same(sent.stream_options, { include_obfuscation: false, include_usage: true }, 'include_usage merged, client fields kept')
      else t.notOk('stream_options' in sent, 'stream_options removed for an upstream that rejects it')
      t.equal(sent.stream, true)

      t.ok(relayed.chunks.length > 30, `arrived in ${relayed.chunks.length} chunks`)
      t.ok(splitsACharacter(relayed.chunks), 'some chunk ends inside a multi-byte character')
      t.ok(relayed.chunks.some((chunk) => chunk.length === 1 && chunk[0] === 0x0a), 'a blank line arrived on its own')
      t.equal(relayed.error, undefined)
      t.equal(relayed.out, stream.events.join(''), 'the same events, without the keep-alive')
      t.equal(relayed.tail, '', 'the upstream [DONE] was already forwarded')
      t.equal(relayed.text, 'Héllo, wörld 你好 🎉')
      const doneAt = relayed.finishedAfter.indexOf(true)
      t.equal(doneAt, relayed.finishedAfter.length - 1, 'finished only once the last byte of [DONE] arrived')
      t.same(adaptor.createStream(channel, req).usage(), undefined)
    })

    t.test('reads the usage of the final stream chunk', async (t) => {
      const stream = chatStream(protocol)
      up.answer((res) => writeAwkwardly(res, stream.text, [[Buffer.byteLength(stream.text) - 30, Buffer.byteLength(stream.text)]]))
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      const converter = adaptor.createStream(channel, req)
      const relayed = await relay(await send(adaptor.buildRequest(channel, req)), converter)
      t.ok(converter.finished())
      t.same(converter.usage(), USAGE)
      t.equal(relayed.text, 'Héllo, wörld 你好 🎉')
      t.equal(converter.takeText(), '', 'taken text is cleared')
      if (protocol.streamOptions === 'merged') t.same(parsed(up.last().body).stream_options, { include_usage: true }, 'include_usage added when the client sent none')
    })

    t.test('a stream cut before [DONE] is not finished', async (t) => {
      const stream = chatStream(protocol)
      const firstTwo = (stream.events[0] ?? '') + (stream.events[1] ?? '')
      const third = Buffer.from(stream.events[2] ?? '')
      up.answer(async (res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
        await write(res, Buffer.from(firstTwo))
        await write(res, third.subarray(0, third.indexOf('你') + 1))
        res.destroy()
      })
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      const converter = adaptor.createStream(channel, req)
      const relayed = await relay(await send(adaptor.buildRequest(channel, req)), converter)
      t.ok(relayed.error, 'the client saw the connection drop')
      t.equal(relayed.out, firstTwo, 'complete events were forwarded')
      t.equal(relayed.tail, '', 'the cut event is not forwarded')
      t.notOk(converter.finished())
      t.equal(converter.usage(), undefined)
      t.equal(relayed.text, 'Héllo, ', 'text of the complete events, for counting')
    })

    t.test('merges include_usage into a streamed legacy completion and leaves other endpoints alone', async (t) => {
      up.answer((res) => json(res, 200, {}))
      await send(adaptor.buildRequest(channel, relayRequest('completions', { prompt: 'Say hi', stream: true, stream_options: { include_obfuscation: true } }, true)))
      t.equal(up.last().url, protocol.path('completions', MODEL))
      const sent = parsed(up.last().body)
      if (protocol.streamOptions === 'merged') t.same(sent.stream_options, { include_obfuscation: true, include_usage: true })
      else t.notOk('stream_options' in sent)
      await send(adaptor.buildRequest(channel, relayRequest('responses', { input: 'hi', stream: true, stream_options: { include_obfuscation: false } }, true)))
      t.equal(up.last().url, protocol.path('responses', MODEL))
      t.same(parsed(up.last().body).stream_options, { include_obfuscation: false }, 'responses: the client\'s stream_options untouched')
    })

    t.test('relays a responses-API stream with its event names, usage and end', async (t) => {
      const stream = responsesStream()
      up.answer((res) => writeAwkwardly(res, stream.text, slowRanges(stream.text, 'ü', 12)))
      const req = relayRequest('responses', { input: 'hi', stream: true }, true)
      const converter = adaptor.createStream(channel, req)
      const relayed = await relay(await send(adaptor.buildRequest(channel, req)), converter)
      t.equal(relayed.out, stream.text)
      t.equal(relayed.text, 'Grüße 🌍')
      t.same(converter.usage(), { promptTokens: 10, completionTokens: 5, cachedTokens: 2 })
      t.equal(relayed.finishedAfter.indexOf(true), relayed.finishedAfter.length - 1, 'finished on response.completed')
    })

    t.test('classifies failures', async (t) => {
      for (const c of ERROR_CASES) {
        up.answer((res) => {
          res.writeHead(c.status, { 'Content-Type': c.body.startsWith('{') ? 'application/json' : 'text/html' }).end(c.body)
        })
        const res = await send(adaptor.buildRequest(channel, relayRequest('chat', { messages: [] })))
        t.equal(res.status, c.status)
        const failure = adaptor.classifyFailure(res.status, await res.text())
        t.equal(failure.action, c.action, `${c.what}: ${c.action}`)
        t.equal(failure.code, c.code, `${c.what}: code`)
        t.ok(failure.message.length > 0, `${c.what}: a message`)
        t.notMatch(failure.message, /https?:|sk-proj-abcd|sk-live|10\.0\.0\.3/, `${c.what}: no link, address or key`)
      }
      const generic = adaptor.classifyFailure(500, '<html>oops</html>')
      t.match(generic.message, /500/, 'a body without an error envelope gives a generic message with the status')
      t.equal(adaptor.classifyFailure(401, ERROR_CASES[1]?.body ?? '').message, 'Incorrect API key provided: sk-***. You can find your API key at.')
      t.equal(adaptor.classifyFailure(408, '').action, 'retry')
      t.equal(adaptor.classifyFailure(413, '{"error":{"message":"Request too large","type":"invalid_request_error"}}').action, 'client')
      t.equal(adaptor.classifyFailure(422, '{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","foo"],"msg":"Extra inputs are not permitted"}]},"type":"invalid_request_error","code":null}').message,
        'Extra inputs are not permitted (body.foo)')
    })

    t.test('lists the upstream models', async (t) => {
      up.answer((res) => json(res, 200, {
        object: 'list',
        data: [
          { id: 'model-a', object: 'model', created: 1_686_935_002, owned_by: 'system' },
          { id: 'model-b', object: 'model', created: 1_686_935_002, owned_by: 'system' }
        ]
      }))
      const built = adaptor.listModelsRequest(channel)
      if (built === undefined) {
        t.fail('no model list request')
        return
      }
      t.equal(built.method, 'GET')
      const res = await send(built)
      t.equal(up.last().url, protocol.path('models', ''))
      checkAuth(t, protocol, channel, up.last())
      t.same(adaptor.parseModels(await res.text()), ['model-a', 'model-b'])
      t.throws(() => adaptor.parseModels('<html>'), ProviderError)
    })

    t.test('sends embeddings, moderations, rerank, image and speech requests in the OpenAI shape', async (t) => {
      const cases: Array<{ endpoint: OpenAIEndpoint, body: Record<string, unknown>, answer: unknown, usage?: Usage }> = [
        {
          endpoint: 'embeddings',
          body: { input: ['a', 'b'], encoding_format: 'float', dimensions: 256 },
          answer: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, -0.2] }], model: MODEL, usage: { prompt_tokens: 5, total_tokens: 5 } },
          usage: { promptTokens: 5, completionTokens: 0 }
        },
        {
          endpoint: 'moderations',
          body: { input: 'I want to hug you' },
          answer: { id: 'modr-1', model: MODEL, results: [{ flagged: false, categories: {}, category_scores: {} }] }
        },
        {
          endpoint: 'rerank',
          body: { query: 'apple', documents: ['apple pie', 'car'], top_n: 1, return_documents: false },
          answer: { id: 'r-1', results: [{ index: 0, relevance_score: 0.98 }], tokens: { input_tokens: 11, output_tokens: 0 } },
          usage: { promptTokens: 11, completionTokens: 0 }
        },
        {
          endpoint: 'images_generations',
          body: { prompt: 'a red cat', n: 1, size: '1024x1024', quality: 'hd', style: 'vivid' },
          answer: { created: 1_700_000_000, data: [{ url: 'https://example.com/cat.png', revised_prompt: 'a red cat' }] }
        }
      ]
      for (const c of cases) {
        up.answer((res) => json(res, 200, c.answer))
        const req = relayRequest(c.endpoint, { ...c.body, model: 'client-alias' })
        const res = await send(adaptor.buildRequest(channel, req))
        const seen = up.last()
        t.equal(seen.url, protocol.path(c.endpoint, MODEL), `${c.endpoint}: path`)
        checkAuth(t, protocol, channel, seen)
        t.same(parsed(seen.body), { ...c.body, model: MODEL }, `${c.endpoint}: body`)
        const converted = adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
        t.same(converted.usage, c.usage, `${c.endpoint}: usage`)
      }

      const audio = Buffer.from([0xff, 0xf3, 0x44, 0xc4, 0x00, 0x00, 0x00, 0x03, 0x48, 0x00, 0xe2, 0x80])
      up.answer((res) => { res.writeHead(200, { 'Content-Type': 'audio/mpeg' }).end(audio) })
      const speech = relayRequest('audio_speech', { model: 'tts', input: 'Hello', voice: 'alloy', response_format: 'mp3', speed: 1.25 })
      const res = await send(adaptor.buildRequest(channel, speech))
      t.equal(up.last().url, protocol.path('audio_speech', MODEL))
      t.same(parsed(up.last().body), { input: 'Hello', voice: 'alloy', response_format: 'mp3', speed: 1.25, model: MODEL })
      const converted = adaptor.convertResponse(channel, speech, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
      t.equal(converted.contentType, 'audio/mpeg')
      t.same(Buffer.from(converted.body), audio, 'speech bytes unchanged')
      t.equal(converted.usage, undefined)
    })

    t.test('forwards multipart bodies byte for byte with their content type', async (t) => {
      const boundary = `----modelgate${type}`
      const file = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0xff, 0xfe, 0x80, 0x00, 0x0d, 0x0a, 0xc3])
      const data = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="hello.mp3"\r\nContent-Type: audio/mpeg\r\n\r\n`),
        file,
        Buffer.from(`\r\n--${boundary}--\r\n`)
      ])
      const contentType = `multipart/form-data; boundary=${boundary}`
      for (const endpoint of ['audio_transcriptions', 'audio_translations', 'images_edits'] as const) {
        up.answer((res) => json(res, 200, { text: 'hello', usage: { type: 'tokens', input_tokens: 14, output_tokens: 2, total_tokens: 16 } }))
        const req: RelayRequest = { endpoint, format: 'openai', model: MODEL, stream: false, raw: { contentType, data } }
        const res = await send(adaptor.buildRequest(channel, req))
        const seen = up.last()
        t.equal(seen.url, protocol.path(endpoint, MODEL), `${endpoint}: path`)
        t.equal(seen.headers['content-type'], contentType, `${endpoint}: content type`)
        t.same(seen.body, data, `${endpoint}: the same bytes`)
        checkAuth(t, protocol, channel, seen)
        const converted = adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
        t.same(converted.usage, { promptTokens: 14, completionTokens: 2 }, `${endpoint}: token usage`)
      }
    })

    t.test('the channel test request works end to end', async (t) => {
      up.answer((res) => json(res, 200, {
        id: 'chatcmpl-3', object: 'chat.completion', created: 1, model: MODEL,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 }
      }))
      const model = adaptor.defaultModels[0] ?? 'my-model'
      const req = adaptor.testRequest(channel, model)
      t.equal(req.endpoint, 'chat')
      t.equal(req.model, model)
      const res = await send(adaptor.buildRequest(channel, req))
      t.equal(up.last().url, protocol.path('chat', model))
      const converted = adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
      t.same(converted.usage, { promptTokens: 8, completionTokens: 2 })
    })

    t.test('uses the default base URL when the channel has none', async (t) => {
      const bare = { ...channel, baseUrl: '' }
      if (adaptor.defaultBaseUrl === '') {
        t.throws(() => adaptor.buildRequest(bare, relayRequest('chat', {})), { code: 'PROV_ERR_NO_BASE_URL' })
        return
      }
      t.match(adaptor.defaultBaseUrl, /^https?:\/\/[^/]+$/)
      t.equal(adaptor.buildRequest(bare, relayRequest('chat', {})).url, adaptor.defaultBaseUrl + protocol.path('chat', MODEL))
      t.equal(adaptor.listModelsRequest(bare)?.url, adaptor.defaultBaseUrl + protocol.path('models', ''))
    })
  })
}


for (const type of registeredTypes()) {
  const protocol = NATIVE[type]
  const found = adaptorFor(type)
  if (protocol === undefined || found === undefined) continue
  const adaptor: ProviderAdaptor = found

  t.test(`${adaptor.name} (type ${type}, native protocol)`, async (t) => {
    const up = await startUpstream(t)
    const channel: ChannelConfig = { id: type, type, key: `sk-test-${type}`, baseUrl: up.origin, other: '', organization: null, setting: {} }
    /** Answers with `body` (JSON, or an SSE text) when the request is authorized, else as the provider refuses. */
    const serve = (body: unknown, status = 200) => up.answer(async (res, seen) => {
      if (!protocol.authorized(seen, channel)) {
        protocol.refuse(res)
        return
      }
      if (typeof body === 'string') await writeAwkwardly(res, body, slowRanges(body, 'ö', 24))
      else json(res, status, body)
    })
    const convert = async (req: RelayRequest, res: Response) =>
      adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))

    t.test('serves OpenAI chat clients', async (t) => {
      t.ok(adaptor.supports('chat', 'openai'))
      t.notOk(adaptor.supports('embeddings', 'openai'))
      t.notOk(adaptor.supports('chat', 'gemini'))
    })

    t.test('sends a converted chat request with its credential; a wrong one fails and disables the channel', async (t) => {
      serve(protocol.answer)
      const body = { model: 'client-alias', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER_TOOL] }
      const req = relayRequest('chat', body)
      const res = await send(adaptor.buildRequest(channel, req))
      t.equal(res.status, 200)
      const seen = up.last()
      t.equal(seen.method, 'POST')
      t.equal(seen.url, protocol.chatPath(MODEL, false))
      t.match(seen.headers['content-type'], /^application\/json/)
      protocol.checkChatBody(t, parsed(seen.body))

      const wrong = await send(adaptor.buildRequest({ ...channel, key: 'sk-wrong' }, req))
      t.not(wrong.status, 200, 'the upstream refuses a wrong credential')
      t.equal(adaptor.classifyFailure(wrong.status, await wrong.text()).action, 'disable')
    })

    t.test('converts a non-streamed answer with its usage and text', async (t) => {
      serve(protocol.answer)
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
      const converted = await convert(req, await send(adaptor.buildRequest(channel, req)))
      t.equal(converted.status, 200)
      t.match(converted.contentType, /^application\/json/)
      const answer = parsed(Buffer.from(converted.body))
      t.match(answer, { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }] })
      t.same(answer.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 4 } })
      t.same(converted.usage, NATIVE_USAGE)
      t.equal(converted.text, 'Hello there')
    })

    t.test('converts a stream that arrives in awkward chunks', async (t) => {
      const stream = protocol.stream()
      serve(stream)
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      const converter = adaptor.createStream(channel, req)
      const res = await send(adaptor.buildRequest(channel, req))
      t.equal(up.last().url, protocol.chatPath(MODEL, true))
      const relayed = await relay(res, converter)
      t.equal(relayed.error, undefined)
      t.ok(splitsACharacter(relayed.chunks), 'some chunk ends inside a multi-byte character')
      const summary = readChunks(relayed.out + relayed.tail)
      t.ok(summary.roleFirst, 'the role comes first')
      t.equal(summary.content, 'Héllo, wörld 你好 🎉')
      t.equal(summary.finish, 'stop')
      t.same(summary.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 4 } })
      t.ok(summary.done, 'ends with [DONE]')
      t.equal(relayed.tail, '', 'everything went out before the upstream closed')
      t.equal(relayed.finishedAfter.indexOf(true), relayed.finishedAfter.length - 1, 'finished only on the last chunk')
      t.same(converter.usage(), NATIVE_USAGE)
      t.equal(relayed.text, 'Héllo, wörld 你好 🎉')
    })

    t.test('converts tool calls, streamed and not', async (t) => {
      const body = { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER_TOOL], tool_choice: 'auto' }
      serve(protocol.toolAnswer)
      const req = relayRequest('chat', body)
      const answer = parsed(Buffer.from((await convert(req, await send(adaptor.buildRequest(channel, req)))).body))
      t.match(answer, { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather' } }] } }] })
      const calls = (answer.choices as Array<{ message: { tool_calls: Array<{ function: { arguments: string } }> } }>)[0]?.message.tool_calls
      t.same(JSON.parse(calls?.[0]?.function.arguments ?? ''), { city: 'Paris' }, 'arguments as a JSON string')

      serve(protocol.toolStream())
      const streamed = relayRequest('chat', { ...body, stream: true }, true)
      const relayed = await relay(await send(adaptor.buildRequest(channel, streamed)), adaptor.createStream(channel, streamed))
      const summary = readChunks(relayed.out + relayed.tail)
      t.equal(summary.toolCalls.length, 1)
      t.equal(summary.toolCalls[0]?.id, 'call_1')
      t.equal(summary.toolCalls[0]?.name, 'get_weather')
      t.same(JSON.parse(summary.toolCalls[0]?.arguments ?? ''), { city: 'Paris' })
      t.equal(summary.finish, 'tool_calls')
      t.ok(summary.done)
    })

    t.test('a stream cut before its end is not finished', async (t) => {
      const stream = protocol.stream()
      const cut = Buffer.from(stream).subarray(0, Buffer.from(stream).indexOf('你'))
      up.answer(async (res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
        await write(res, cut)
        res.destroy()
      })
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      const converter = adaptor.createStream(channel, req)
      const relayed = await relay(await send(adaptor.buildRequest(channel, req)), converter)
      t.ok(relayed.error, 'the client saw the connection drop')
      t.notOk(converter.finished())
      t.equal(converter.usage(), undefined)
      t.equal(readChunks(relayed.out + relayed.tail).content, 'Héllo, ', 'the text of the complete events went out')
      t.equal(relayed.text, 'Héllo, ')
    })

    t.test('classifies failures', async (t) => {
      for (const c of protocol.errors) {
        up.answer((res) => { res.writeHead(c.status, { 'Content-Type': 'application/json' }).end(c.body) })
        const res = await send(adaptor.buildRequest(channel, relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })))
        t.equal(res.status, c.status)
        const failure = adaptor.classifyFailure(res.status, await res.text())
        t.equal(failure.action, c.action, `${c.what}: ${c.action}`)
        t.equal(failure.code, c.code, `${c.what}: code`)
        t.ok(failure.message.length > 0, `${c.what}: a message`)
      }
      t.match(adaptor.classifyFailure(502, '<html>Bad gateway</html>'), { action: 'retry', message: /502/ })
    })

    t.test('lists the upstream models', async (t) => {
      serve(protocol.models)
      const built = adaptor.listModelsRequest(channel)
      if (built === undefined) {
        t.fail('no model list request')
        return
      }
      t.equal(built.method, 'GET')
      const res = await send(built)
      t.equal(res.status, 200, 'authorized')
      t.equal(up.last().url, protocol.modelsPath)
      t.same(adaptor.parseModels(await res.text()), ['model-a', 'model-b'])
      t.throws(() => adaptor.parseModels('<html>'), ProviderError)
    })

    t.test('the channel test request works end to end', async (t) => {
      serve(protocol.answer)
      const model = adaptor.defaultModels[0] ?? 'my-model'
      const req = adaptor.testRequest(channel, model)
      t.equal(req.model, model)
      const res = await send(adaptor.buildRequest(channel, req))
      t.equal(up.last().url, protocol.chatPath(model, false))
      t.same((await convert(req, res)).usage, NATIVE_USAGE)
    })

    t.test('uses the default base URL when the channel has none', async (t) => {
      t.match(adaptor.defaultBaseUrl, /^https:\/\/[^/]+$/)
      const bare = { ...channel, baseUrl: '' }
      t.equal(adaptor.buildRequest(bare, relayRequest('chat', { messages: [] })).url, adaptor.defaultBaseUrl + protocol.chatPath(MODEL, false))
      t.equal(adaptor.listModelsRequest(bare)?.url, adaptor.defaultBaseUrl + protocol.modelsPath)
    })
  })
}

t.test('OpenAI sends OpenAI-Organization only when the channel names one', async (t) => {
  const openAI = adaptorFor(1)
  if (openAI === undefined) throw new Error('no OpenAI adaptor')
  const up = await startUpstream(t)
  up.answer((res) => json(res, 200, {}))
  const channel = channelFor(1, openAIWire(), up.origin)
  await send(openAI.buildRequest({ ...channel, organization: null }, relayRequest('chat', {})))
  t.equal(up.last().headers['openai-organization'], undefined)
  await send(openAI.buildRequest({ ...channel, organization: 'org-abc' }, relayRequest('chat', {})))
  t.equal(up.last().headers['openai-organization'], 'org-abc')
  t.equal(openAI.buildRequest({ ...channel, baseUrl: `${up.origin}/v1/` }, relayRequest('chat', {})).url, `${up.origin}/v1/chat/completions`, 'a base URL ending in /v1 is not doubled')
})

t.test('Azure builds deployment URLs with the channel API version, else the default', async (t) => {
  const azure = adaptorFor(3)
  if (azure === undefined) throw new Error('no Azure adaptor')
  const up = await startUpstream(t)
  up.answer((res) => json(res, 200, { object: 'list', data: [{ id: 'gpt-4o', object: 'model' }] }))
  const channel: ChannelConfig = { id: 3, type: 3, key: 'azure-key-0123', baseUrl: `${up.origin}/`, other: '', organization: null, setting: {} }
  const chat = azure.buildRequest(channel, { ...relayRequest('chat', {}), model: 'gpt-3.5-turbo' })
  t.equal(chat.url, `${up.origin}/openai/deployments/gpt-35-turbo/chat/completions?api-version=2023-06-01-preview`)
  t.same(chat.headers, { 'api-key': 'azure-key-0123', 'Content-Type': 'application/json' })
  await send(chat)
  t.equal(up.last().headers['api-key'], 'azure-key-0123')
  t.equal(azure.buildRequest({ ...channel, other: '2024-10-21' }, relayRequest('embeddings', { input: 'x' })).url,
    `${up.origin}/openai/deployments/gpt-41-mini/embeddings?api-version=2024-10-21`)
  t.equal(azure.buildRequest({ ...channel, other: '2025-04-01-preview' }, relayRequest('responses', { input: 'x' })).url,
    `${up.origin}/openai/responses?api-version=2025-04-01-preview`)
  const list = azure.listModelsRequest(channel)
  t.equal(list?.url, `${up.origin}/openai/models?api-version=2023-06-01-preview`)
  if (list !== undefined) t.same(azure.parseModels(await (await send(list)).text()), ['gpt-4o'])
})

t.test('a custom channel uses its full URL with {model} replaced', async (t) => {
  const custom = adaptorFor(8)
  if (custom === undefined) throw new Error('no custom adaptor')
  const up = await startUpstream(t)
  up.answer((res) => json(res, 200, { choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }))
  const channel: ChannelConfig = { id: 8, type: 8, key: 'k-8', baseUrl: `${up.origin}/models/{model}/chat`, other: '', organization: null, setting: {} }
  const req = { ...relayRequest('chat', { messages: [] }), model: 'meta/llama-3.1 8b' }
  await send(custom.buildRequest(channel, req))
  t.equal(up.last().url, '/models/meta/llama-3.1%208b/chat', 'model substituted, slashes kept, spaces escaped')
  t.equal(up.last().headers.authorization, 'Bearer k-8')
  t.same(parsed(up.last().body).model, 'meta/llama-3.1 8b')
  t.equal(custom.buildRequest(channel, relayRequest('embeddings', { input: 'x' })).url, `${up.origin}/models/gpt-4.1-mini/chat`, 'a URL with a path serves every endpoint as is')
  t.equal(custom.listModelsRequest(channel), undefined, 'no model list behind a full URL')
  const fixed = { ...channel, baseUrl: `${up.origin}/api/chat` }
  t.equal(custom.buildRequest(fixed, relayRequest('chat', {})).url, `${up.origin}/api/chat`)
  const bare = { ...channel, baseUrl: up.origin }
  t.equal(custom.buildRequest(bare, relayRequest('rerank', {})).url, `${up.origin}/v1/rerank`, 'a bare origin gets the OpenAI path')
  t.throws(() => custom.buildRequest({ ...channel, baseUrl: 'ftp://x' }, relayRequest('chat', {})), { code: 'PROV_ERR_BAD_BASE_URL' })
})

t.test('Ollama needs no key but sends one when set', async (t) => {
  const ollama = adaptorFor(4)
  if (ollama === undefined) throw new Error('no Ollama adaptor')
  const up = await startUpstream(t)
  up.answer((res) => json(res, 200, {}))
  const channel: ChannelConfig = { id: 4, type: 4, key: '', baseUrl: up.origin, other: '', organization: null, setting: {} }
  await send(ollama.buildRequest(channel, relayRequest('chat', {})))
  t.equal(up.last().headers.authorization, undefined)
  await send(ollama.buildRequest({ ...channel, key: 'proxy-key' }, relayRequest('chat', {})))
  t.equal(up.last().headers.authorization, 'Bearer proxy-key')
  t.equal(ollama.defaultBaseUrl, 'http://localhost:11434')
})

t.test('the registry names every type of the specification and offers default models', async (t) => {
  const spec = [1, 2, 3, 4, 5, 8, 11, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 31, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45]
  t.same(Object.keys(CHANNEL_TYPE_NAMES).map(Number).sort((a, b) => a - b), spec)
  for (const type of spec.filter((type) => !registeredTypes().includes(type))) t.equal(adaptorFor(type), undefined, `type ${type} has no adaptor yet`)
  t.equal(adaptorFor(999), undefined)
  const models = defaultModelsByType()
  t.same(Object.keys(models).map(Number), registeredTypes())
  t.same(models[43], ['deepseek-chat', 'deepseek-reasoner'])
  t.ok(models[1]?.includes('gpt-4o') && models[1].includes('text-embedding-3-small') && models[1].includes('whisper-1'))
  for (const type of registeredTypes()) if (type !== 8) t.ok((models[type]?.length ?? 0) > 0, `type ${type} has default models`)
  models[43]?.push('changed')
  t.same(defaultModelsByType()[43], ['deepseek-chat', 'deepseek-reasoner'], 'callers get copies')
})
