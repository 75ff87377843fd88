// Type 34: Cohere's API v2 (api.cohere.com), Bearer key: /v2/chat (its own messages, answers
// and typed stream events), /v2/embed, /v2/rerank; errors as {id, message}.
import { ProviderError, testChannel, type ConvertedResponse, type RelayRequest } from '../../src/index.js'
import { bytesOf, MODEL, type NativeProtocol, parsed, readChunks, relay, relayRequest } from '../kit.js'

const KEY = 'co-test-34-abcdefghijklmnop'
const USAGE = { billed_units: { input_tokens: 12, output_tokens: 7 }, tokens: { input_tokens: 220, output_tokens: 7 }, cached_tokens: 4 }

const answer = (content: unknown[], finish: string, extra: Record<string, unknown> = {}) => ({
  id: 'co-answer-1', finish_reason: finish, message: { role: 'assistant', content, ...extra }, usage: USAGE
})

/** Cohere's stream framing: `event: <type>` and the event as `data:` (its type repeated), LF line ends. */
const events = (list: Array<Record<string, unknown>>): string =>
  list.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('')

const start = { type: 'message-start', id: 'co-stream-1', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } }
const end = (finish: string) => ({ type: 'message-end', delta: { finish_reason: finish, usage: USAGE } })
const text = (value: string) => ({ type: 'content-delta', index: 0, delta: { message: { content: { text: value } } } })

const cohereError = (message: string) => JSON.stringify({ id: 'err-1', message })

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 34, type: 34, key: KEY, baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'co-wrong-key',
  authorized: (seen, channel) => seen.headers.authorization === `Bearer ${channel.key}`,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(cohereError('invalid api token'))
  },
  chat: {
    path: () => '/v2/chat',
    answer: answer([{ type: 'text', text: 'Hello there' }], 'COMPLETE'),
    stream: () => events([
      start,
      { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
      text('Héllo, '),
      text('wörld 你好 🎉'),
      { type: 'content-end', index: 0 },
      end('COMPLETE')
    ]),
    tools: {
      answer: answer([], 'TOOL_CALL', {
        tool_plan: 'I will look up the weather.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]
      }),
      stream: () => events([
        start,
        { type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will look it up.' } } },
        { type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } } } } },
        { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: '{"city":' } } } } },
        { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: '"Paris"}' } } } } },
        { type: 'tool-call-end', index: 0 },
        end('TOOL_CALL')
      ])
    },
    checkBody: (t, body) => {
      t.equal(body.model, MODEL)
      t.same(body.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }], 'messages')
      t.same(body.tools, [{ type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }], 'tools')
      t.equal(body.stream, undefined, 'not streamed')
    }
  },
  endpoints: ['embeddings', 'rerank'],
  models: {
    path: '/v1/models?page_size=1000',
    answer: {
      models: [
        { name: 'model-a', endpoints: ['chat', 'generate'], context_length: 256000 },
        { name: 'classifier-x', endpoints: ['classify'] },
        { name: 'model-b', endpoints: ['embed'] }
      ],
      next_page_token: null
    }
  },
  errors: [
    { what: '401 invalid token', status: 401, body: cohereError('invalid api token'), action: 'disable' },
    { what: '402 payment required', status: 402, body: cohereError('Please add a payment method to continue.'), action: 'disable' },
    { what: '498 invalid token', status: 498, body: cohereError('invalid token'), action: 'disable' },
    { what: '429 trial key per minute', status: 429, body: cohereError('You are using a Trial key, which is limited to 20 API calls / minute. You can continue to use the Trial key for free or upgrade to a Production key with higher rate limits.'), action: 'retry' },
    { what: '429 trial key monthly', status: 429, body: cohereError('You are using a Trial key, which is limited to 1000 API calls / month. You can continue to use the Trial key for free or upgrade to a Production key with higher rate limits.'), action: 'disable' },
    { what: '400 bad request', status: 400, body: cohereError('invalid request: message must be at least 1 token long or tool results must be specified.'), action: 'client' },
    { what: '404 unknown model', status: 404, body: cohereError("model 'command-z' not found, make sure the correct model ID was used and that you have access to the model."), action: 'client' },
    { what: '422 unprocessable', status: 422, body: cohereError('invalid type: parameter p is of type string but should be of type number.'), action: 'client' },
    { what: '500 internal', status: 500, body: cohereError('internal server error, this has been reported to our developers.'), action: 'retry' },
    { what: '503 unavailable', status: 503, body: cohereError('service unavailable'), action: 'retry' }
  ],
  extra: async (t, { up, channel, adaptor, serve, send }) => {
    const convert = async (req: RelayRequest, res: Response): Promise<ConvertedResponse> =>
      adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))

    t.test('converts turns, images, tool calls and results, sampling and JSON output to Cohere\'s form', async (t) => {
      serve(fixture.chat?.answer)
      await send(relayRequest('chat', {
        messages: [
          { role: 'developer', content: [{ type: 'text', text: 'S1' }] },
          { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } }] },
          { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_9', content: [{ type: 'text', text: '{"temp":21}' }] },
          { role: 'assistant', content: 'It is 21 degrees.' },
          { role: 'user', content: 'Thanks' }
        ],
        temperature: 0.3, top_p: 0.9, top_k: 40, max_completion_tokens: 100, stop: 'END', seed: 7, frequency_penalty: 0.1, presence_penalty: 0.2,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'string' } } } } },
        reasoning_effort: 'low', safety_mode: 'OFF', user: 'u-1', logit_bias: { 1: 2 },
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }, { type: 'function', function: { name: 'other' } }],
        tool_choice: { type: 'function', function: { name: 'get_weather' } }
      }))
      const body = parsed(up.last().body)
      t.same(body.messages, [
        { role: 'system', content: 'S1' },
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } }] },
        { role: 'assistant', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }], tool_plan: 'Checking.' },
        { role: 'tool', tool_call_id: 'call_9', content: '{"temp":21}' },
        { role: 'assistant', content: 'It is 21 degrees.' },
        { role: 'user', content: 'Thanks' }
      ])
      t.same(body.tools, [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }], 'only the forced function')
      t.match(body, {
        tool_choice: 'REQUIRED', temperature: 0.3, p: 0.9, k: 40, max_tokens: 100, stop_sequences: ['END'], seed: 7, frequency_penalty: 0.1, presence_penalty: 0.2,
        response_format: { type: 'json_object', json_schema: { type: 'object', properties: { a: { type: 'string' } } } },
        thinking: { type: 'enabled' }, safety_mode: 'OFF'
      })
      for (const field of ['user', 'logit_bias', 'top_p', 'stop', 'max_completion_tokens', 'reasoning_effort']) t.notOk(field in body, `no ${field}`)
      await send(relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'none', reasoning_effort: 'none' }))
      const none = parsed(up.last().body)
      t.equal(none.tools, undefined, 'tool_choice none sends no tools')
      t.same(none.thinking, { type: 'disabled' })
      await send(relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true))
      t.equal(parsed(up.last().body).stream, true)
      t.equal(up.last().headers.authorization, `Bearer ${KEY}`)
    })

    t.test('thinking becomes reasoning_content, streamed and not; finish reasons are mapped', async (t) => {
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
      serve(answer([{ type: 'thinking', thinking: 'Let me think.' }, { type: 'text', text: 'Yes.' }], 'MAX_TOKENS'))
      const converted = await convert(req, await send(req))
      t.match(parsed(Buffer.from(converted.body)), { choices: [{ finish_reason: 'length', message: { content: 'Yes.', reasoning_content: 'Let me think.' } }] })
      t.equal(converted.text, 'Yes.Let me think.')
      const streamed = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      serve(events([
        start,
        { type: 'content-start', index: 0, delta: { message: { content: { type: 'thinking', thinking: '' } } } },
        { type: 'content-delta', index: 0, delta: { message: { content: { thinking: 'Hmm, ' } } } },
        { type: 'content-delta', index: 0, delta: { message: { content: { thinking: 'ok.' } } } },
        { type: 'content-end', index: 0 },
        { type: 'content-start', index: 1, delta: { message: { content: { type: 'text', text: '' } } } },
        { type: 'content-delta', index: 1, delta: { message: { content: { text: 'Done' } } } },
        { type: 'citation-start', index: 0, delta: { message: { citations: { start: 0, end: 4, text: 'Done', sources: [] } } } },
        { type: 'citation-end', index: 0 },
        { type: 'content-end', index: 1 },
        end('STOP_SEQUENCE')
      ]))
      const converter = adaptor.createStream(channel, streamed)
      const relayed = await relay(await send(streamed), converter)
      const summary = readChunks(relayed.out + relayed.tail)
      t.equal(summary.reasoning, 'Hmm, ok.')
      t.equal(summary.content, 'Done')
      t.equal(summary.finish, 'stop')
      t.ok(summary.done)
      t.same(converter.usage(), { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })
      t.match(relayed.out, /"id":"co-stream-1"/, 'the id of message-start')
    })

    t.test('parallel tool calls keep their own indexes and argument fragments', async (t) => {
      const streamed = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      const call = (index: number, id: string, city: string) => [
        { type: 'tool-call-start', index, delta: { message: { tool_calls: { id, type: 'function', function: { name: 'get_weather', arguments: '' } } } } },
        { type: 'tool-call-delta', index, delta: { message: { tool_calls: { function: { arguments: `{"city":"${city}"` } } } } },
        { type: 'tool-call-delta', index, delta: { message: { tool_calls: { function: { arguments: '}' } } } } },
        { type: 'tool-call-end', index }
      ]
      serve(events([start, ...call(0, 'call_a', 'Paris'), ...call(1, 'call_b', 'Rome'), end('TOOL_CALL')]))
      const converter = adaptor.createStream(channel, streamed)
      const relayed = await relay(await send(streamed), converter)
      const summary = readChunks(relayed.out + relayed.tail)
      t.same(summary.toolCalls, [
        { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' }
      ])
      t.equal(summary.finish, 'tool_calls')
      t.equal(relayed.text, '{"city":"Paris"}{"city":"Rome"}', 'arguments are counted as completion text')
    })

    t.test('usage falls back on the raw token counts without billed units', async (t) => {
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
      serve({ ...answer([{ type: 'text', text: 'Hi' }], 'COMPLETE'), usage: { tokens: { input_tokens: 30, output_tokens: 2 } } })
      t.same((await convert(req, await send(req))).usage, { promptTokens: 30, completionTokens: 2 })
    })

    t.test('embeddings: OpenAI\'s request to /v2/embed, OpenAI\'s list back (floats or base64)', async (t) => {
      const vectors = [[0.5, -0.25, 0.125], [1, 0, -1]]
      serve({ id: 'emb-1', embeddings: { float: vectors }, texts: ['a', 'b'], meta: { api_version: { version: '2' }, billed_units: { input_tokens: 6 } }, response_type: 'embeddings_by_type' })
      const embed: RelayRequest = { ...relayRequest('embeddings', { model: 'alias', input: ['a', 'b'], dimensions: 256, encoding_format: 'float' }), model: 'embed-v4.0' }
      const converted = await convert(embed, await send(embed))
      const seen = up.last()
      t.equal(seen.url, '/v2/embed')
      t.same(parsed(seen.body), { model: 'embed-v4.0', texts: ['a', 'b'], input_type: 'search_document', embedding_types: ['float'], output_dimension: 256 })
      t.same(converted.usage, { promptTokens: 6, completionTokens: 0 })
      t.same(parsed(Buffer.from(converted.body)), { object: 'list', data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })), model: 'embed-v4.0', usage: { prompt_tokens: 6, total_tokens: 6 } })
      const b64: RelayRequest = { ...embed, body: { input: 'a', encoding_format: 'base64', input_type: 'search_query' } }
      const encoded = parsed(Buffer.from((await convert(b64, await send(b64))).body)) as { data: Array<{ embedding: string }> }
      t.match(parsed(up.last().body), { texts: ['a'], input_type: 'search_query' }, 'one text, the client\'s input_type')
      const floats = new Float32Array(new Uint8Array(Buffer.from(encoded.data[1]?.embedding ?? '', 'base64')).buffer)
      t.same([...floats], vectors[1], 'base64 of little-endian float32')
      t.throws(() => adaptor.buildRequest(channel, { ...embed, body: { input: [[1, 2, 3]] } }), ProviderError, 'token arrays are refused')
      const test = adaptor.testRequest(channel, 'embed-v4.0')
      t.equal(test.endpoint, 'embeddings')
      t.equal(adaptor.buildRequest(channel, test).url, `${channel.baseUrl}/v2/embed`)
    })

    t.test('rerank: /v2/rerank, Cohere\'s answer is the gateway\'s, billed by search unit', async (t) => {
      const results = [{ index: 1, relevance_score: 0.91 }, { index: 0, relevance_score: 0.02 }]
      serve({ id: 'rr-1', results, meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } })
      const rerank: RelayRequest = { ...relayRequest('rerank', { query: 'capital of France', documents: ['Berlin', { text: 'Paris' }], top_n: 2 }), model: 'rerank-v3.5' }
      const res = await send(rerank)
      t.equal(up.last().url, '/v2/rerank')
      t.same(parsed(up.last().body), { model: 'rerank-v3.5', query: 'capital of France', documents: ['Berlin', 'Paris'], top_n: 2 })
      const converted = await convert(rerank, res)
      t.same(converted.usage, { promptTokens: 1, completionTokens: 0 })
      t.same(parsed(Buffer.from(converted.body)).results, results, 'forwarded as Cohere sent it')
      const withDocs: RelayRequest = { ...rerank, body: { ...rerank.body, return_documents: true } }
      const documents = parsed(Buffer.from((await convert(withDocs, await send(withDocs))).body)).results
      t.same(documents, [{ index: 1, relevance_score: 0.91, document: { text: 'Paris' } }, { index: 0, relevance_score: 0.02, document: { text: 'Berlin' } }])
      t.notOk('return_documents' in parsed(up.last().body), 'v2 has no return_documents')
      t.equal(adaptor.testRequest(channel, 'rerank-v3.5').endpoint, 'rerank')
    })

    t.test('a channel test proves the key, and a wrong key is one to disable', async (t) => {
      serve(fixture.chat?.answer)
      t.match(await testChannel(adaptor, channel, 'command-a-03-2025'), { ok: true })
      t.match(await testChannel(adaptor, { ...channel, key: 'co-wrong' }, 'command-a-03-2025'), { ok: false, action: 'disable', message: 'invalid api token' })
    })

    t.test('a base URL pasted with /v2 or /v1 is not doubled', async (t) => {
      t.equal(adaptor.buildRequest({ ...channel, baseUrl: 'https://api.cohere.com/v2' }, relayRequest('chat', { messages: [] })).url, 'https://api.cohere.com/v2/chat')
      t.equal(adaptor.listModelsRequest({ ...channel, baseUrl: 'https://api.cohere.com/v1' })?.url, 'https://api.cohere.com/v1/models?page_size=1000')
    })
  }
}
