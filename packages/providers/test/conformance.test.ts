// Every registered adaptor against a real HTTP server on 127.0.0.1 speaking its provider's
// protocol: requests go over the wire exactly as the adaptor built them. The OpenAI-compatible
// types are here; those with a protocol of their own are in native.test.ts.
import t, { type Test } from 'tap'
import {
  adaptorFor,
  CHANNEL_TYPE_NAMES,
  defaultModelsByType,
  ProviderError,
  registeredTypes,
  type ChannelConfig,
  type Endpoint,
  type OpenAIEndpoint,
  type ProviderAdaptor,
  type RelayRequest,
  type UrlTarget,
  type Usage
} from '../src/index.js'
import { bytesOf, json, MODEL, parsed, relay, relayRequest, type Seen, send, slowRanges, splitsACharacter, startUpstream, write, writeAwkwardly } from './kit.js'
import { nativeFixtures } from './native/index.js'

const NATIVE = await nativeFixtures()

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

function channelFor (type: number, protocol: Protocol, origin: string): ChannelConfig {
  return { id: type, type, key: `sk-test-${type}`, baseUrl: origin, other: protocol.other, organization: 'org-test', setting: {} }
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
      t.equal(adaptor.classifyFailure(401, ERROR_CASES[1]?.body ?? '').message, 'Incorrect API key provided: sk-***. You can find your API key at [redacted].')
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
  t.same(Object.keys(models).map(Number).sort((a, b) => a - b), [...registeredTypes(), 2, 5, 36].sort((a, b) => a - b), 'adaptors and task types')
  t.ok(models[2]?.includes('mj_imagine') && models[5]?.includes('mj_upscale'), 'Midjourney types offer the actions')
  t.same(models[36], ['suno_music', 'suno_lyrics'])
  t.same(models[43], ['deepseek-chat', 'deepseek-reasoner'])
  t.ok(models[1]?.includes('gpt-4o') && models[1].includes('text-embedding-3-small') && models[1].includes('whisper-1'))
  for (const type of registeredTypes()) if (type !== 8) t.ok((models[type]?.length ?? 0) > 0, `type ${type} has default models`)
  models[43]?.push('changed')
  t.same(defaultModelsByType()[43], ['deepseek-chat', 'deepseek-reasoner'], 'callers get copies')
})
