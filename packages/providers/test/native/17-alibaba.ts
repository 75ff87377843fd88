// Type 17: Alibaba Cloud Model Studio's DashScope API (dashscope.aliyuncs.com), `Authorization: Bearer <API key>`.
import { MODEL, parsed, readChunks, relay, relayRequest, WEATHER_TOOL, type NativeProtocol } from '../kit.js'

const TEXT_PATH = '/api/v1/services/aigc/text-generation/generation'
const MULTIMODAL_PATH = '/api/v1/services/aigc/multimodal-generation/generation'
const EMBEDDINGS_PATH = '/api/v1/services/embeddings/text-embedding/text-embedding'

const USAGE = { input_tokens: 12, output_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 4 } }

const error = (code: string, message: string) => JSON.stringify({ code, message, request_id: 'req-err' })

const generation = (message: Record<string, unknown>, finish: string, usage: Record<string, unknown> = USAGE) =>
  ({ output: { choices: [{ finish_reason: finish, message: { role: 'assistant', ...message } }] }, usage, request_id: 'req-1' })

/** DashScope's SSE framing: `id:`, `event:result`, the `:HTTP_STATUS/200` comment, `data:` without a space. */
const events = (items: Array<{ message: Record<string, unknown>, finish: string, usage: Record<string, unknown> }>): string =>
  items.map((item, i) => `id:${i + 1}\nevent:result\n:HTTP_STATUS/200\ndata:${JSON.stringify(generation(item.message, item.finish, item.usage))}\n\n`).join('')

const errorEvent = (id: number, status: number, code: string, message: string) =>
  `id:${id}\nevent:error\n:HTTP_STATUS/${status}\ndata:${error(code, message)}\n\n`

const running = { input_tokens: 12, output_tokens: 3, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } }

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 17, type: 17, key: 'sk-dashscope-17', baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'sk-dashscope-wrong',
  authorized: (seen, channel) => seen.headers.authorization === `Bearer ${channel.key}`,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(error('InvalidApiKey', 'Invalid API-key provided.'))
  },
  chat: {
    path: () => TEXT_PATH,
    answer: generation({ content: 'Hello there' }, 'stop'),
    stream: () => events([
      { message: { content: 'Héllo, ' }, finish: 'null', usage: running },
      { message: { content: 'wörld 你好 🎉' }, finish: 'stop', usage: USAGE }
    ]),
    tools: {
      answer: generation({ content: '', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] }, 'tool_calls'),
      stream: () => events([
        { message: { content: '', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, finish: 'null', usage: running },
        { message: { content: '', tool_calls: [{ index: 0, id: '', type: 'function', function: { arguments: '{"city": ' } }] }, finish: 'null', usage: running },
        { message: { content: '', tool_calls: [{ index: 0, id: '', type: 'function', function: { arguments: '"Paris"}' } }] }, finish: 'tool_calls', usage: USAGE }
      ])
    },
    checkBody: (t, body, seen) => {
      t.equal(body.model, MODEL)
      t.same(body.input, { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }] }, 'messages under input')
      t.same(body.parameters, { result_format: 'message', tools: [WEATHER_TOOL] }, 'parameters')
      t.equal(seen.headers['x-dashscope-sse'], undefined, 'no SSE for a whole answer')
    }
  },
  endpoints: ['embeddings'],
  models: {
    path: '/compatible-mode/v1/models',
    answer: { object: 'list', data: [{ id: 'model-a', object: 'model', owned_by: 'system' }, { id: 'model-b', object: 'model', owned_by: 'system' }] }
  },
  errors: [
    { what: '401 invalid key', status: 401, body: error('InvalidApiKey', 'Invalid API-key provided.'), action: 'disable', code: 'InvalidApiKey' },
    { what: '400 arrears', status: 400, body: error('Arrearage', 'Access denied, plesase make sure your account is in good standing.'), action: 'disable', code: 'Arrearage' },
    { what: '403 not purchased', status: 403, body: error('AccessDenied.Unpurchased', 'Access to model denied. Please make sure you are eligible for using the model.'), action: 'disable', code: 'AccessDenied.Unpurchased' },
    { what: '429 throttling', status: 429, body: error('Throttling', 'Requests throttling triggered.'), action: 'retry', code: 'Throttling' },
    { what: '429 rate quota', status: 429, body: error('Throttling.RateQuota', 'Requests rate limit exceeded, please try again later.'), action: 'retry', code: 'Throttling.RateQuota' },
    { what: '500 internal', status: 500, body: error('InternalError', 'An internal error has occured, please try again later or contact service support.'), action: 'retry', code: 'InternalError' },
    { what: '400 data inspection', status: 400, body: error('DataInspectionFailed', 'Input data may contain inappropriate content.'), action: 'client', code: 'DataInspectionFailed' },
    { what: '400 invalid parameter', status: 400, body: error('InvalidParameter', 'Range of input length should be [1, 30720]'), action: 'client', code: 'InvalidParameter' },
    { what: '400 SSE-framed error', status: 400, body: errorEvent(1, 400, 'InvalidParameter', 'Range of input length should be [1, 30720]'), action: 'client', code: 'InvalidParameter' },
    { what: '404 unknown model', status: 404, body: error('ModelNotFound', 'Model not exist.'), action: 'client', code: 'ModelNotFound' }
  ],
  extra: async (t, { up, channel, adaptor, serve, send }) => {
    t.test('streams with X-DashScope-SSE and incremental output', async (t) => {
      serve(events([{ message: { content: 'ok' }, finish: 'stop', usage: USAGE }]))
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true }, max_completion_tokens: 9, enable_thinking: true }, true)
      await relay(await send(req), adaptor.createStream(channel, req))
      const seen = up.last()
      t.equal(seen.headers['x-dashscope-sse'], 'enable')
      t.same(parsed(seen.body).parameters, { result_format: 'message', enable_thinking: true, max_tokens: 9, incremental_output: true })
    })

    t.test('vision models and images go to multimodal-generation with content parts', async (t) => {
      serve(generation({ content: [{ text: 'A cat.' }] }, 'stop', { input_tokens: 1200, output_tokens: 3, image_tokens: 1180 }))
      const image = 'data:image/png;base64,iVBORw0KGgo='
      const req = { ...relayRequest('chat', { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'What is it?' }, { type: 'image_url', image_url: { url: image } }] }] }), model: 'qwen-vl-max' }
      const converted = adaptor.convertResponse(channel, req, 200, 'application/json', Buffer.from(await (await send(req)).arrayBuffer()))
      t.equal(up.last().url, MULTIMODAL_PATH)
      t.same(parsed(up.last().body).input, { messages: [{ role: 'system', content: [{ text: 'Be brief.' }] }, { role: 'user', content: [{ text: 'What is it?' }, { image }] }] })
      t.match(parsed(Buffer.from(converted.body)), { choices: [{ message: { content: 'A cat.' } }] })
      t.same(converted.usage, { promptTokens: 1200, completionTokens: 3 }, 'image tokens are in input_tokens')
    })

    t.test('reasoning and cache-write tokens', async (t) => {
      serve(generation({ content: 'Yes.', reasoning_content: 'Think.' }, 'stop', {
        input_tokens: 100, output_tokens: 40, total_tokens: 140,
        prompt_tokens_details: { cached_tokens: 30, cache_creation_input_tokens: 50 },
        output_tokens_details: { reasoning_tokens: 35 }
      }))
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], enable_thinking: true })
      const converted = adaptor.convertResponse(channel, req, 200, 'application/json', Buffer.from(await (await send(req)).arrayBuffer()))
      t.same(converted.usage, { promptTokens: 100, completionTokens: 40, cachedTokens: 30, cacheWriteTokens: 50 })
      const answer = parsed(Buffer.from(converted.body))
      t.match(answer, { choices: [{ message: { content: 'Yes.', reasoning_content: 'Think.' } }] })
      t.same(answer.usage, { prompt_tokens: 100, completion_tokens: 40, total_tokens: 140, prompt_tokens_details: { cached_tokens: 30 }, completion_tokens_details: { reasoning_tokens: 35 } })
      t.equal(converted.text, 'Yes.Think.')
    })

    t.test('stream errors: after content an error chunk, before it nothing unless the client is at fault', async (t) => {
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      serve(events([{ message: { content: 'Once' }, finish: 'null', usage: running }]) + errorEvent(2, 400, 'DataInspectionFailed', 'Output data may contain inappropriate content.'))
      let converter = adaptor.createStream(channel, req)
      let relayed = await relay(await send(req), converter)
      t.equal(readChunks(relayed.out.slice(0, relayed.out.indexOf('data: {"error"'))).content, 'Once')
      t.match(relayed.out, /"error":\{"message":"Output data may contain inappropriate content\.".*"code":"DataInspectionFailed"/)
      t.notOk(converter.finished())
      t.equal(converter.usage(), undefined)

      serve(errorEvent(1, 429, 'Throttling.RateQuota', 'Requests rate limit exceeded, please try again later.'))
      converter = adaptor.createStream(channel, req)
      relayed = await relay(await send(req), converter)
      t.equal(relayed.out + relayed.tail, '', 'nothing sent: the relay may retry')

      serve(errorEvent(1, 400, 'DataInspectionFailed', 'Input data may contain inappropriate content.'))
      converter = adaptor.createStream(channel, req)
      relayed = await relay(await send(req), converter)
      t.match(relayed.out, /DataInspectionFailed/, 'the client is told')
    })

    t.test('embeddings', async (t) => {
      serve({ output: { embeddings: [{ text_index: 1, embedding: [0.5, -1] }, { text_index: 0, embedding: [0.25, 2] }] }, usage: { total_tokens: 6 }, request_id: 'req-e' })
      const req = { ...relayRequest('embeddings', { input: ['first', 'second'], dimensions: 2 }), model: 'text-embedding-v4' }
      const res = await send(req)
      t.equal(up.last().url, EMBEDDINGS_PATH)
      t.same(parsed(up.last().body), { model: 'text-embedding-v4', input: { texts: ['first', 'second'] }, parameters: { dimension: 2 } })
      const converted = adaptor.convertResponse(channel, req, res.status, 'application/json', Buffer.from(await res.arrayBuffer()))
      t.same(parsed(Buffer.from(converted.body)), {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [0.25, 2] }, { object: 'embedding', index: 1, embedding: [0.5, -1] }],
        model: 'text-embedding-v4',
        usage: { prompt_tokens: 6, total_tokens: 6 }
      })
      t.same(converted.usage, { promptTokens: 6, completionTokens: 0 })

      serve({ output: { embeddings: [{ text_index: 0, embedding: [0.25, 2] }] }, usage: { total_tokens: 2 } })
      const b64 = { ...relayRequest('embeddings', { input: 'first', encoding_format: 'base64' }), model: 'text-embedding-v4' }
      const answer = parsed(Buffer.from(adaptor.convertResponse(channel, b64, 200, 'application/json', Buffer.from(await (await send(b64)).arrayBuffer())).body))
      const vector = Buffer.from((answer.data as Array<{ embedding: string }>)[0]?.embedding ?? '', 'base64')
      t.same([vector.readFloatLE(0), vector.readFloatLE(4)], [0.25, 2], 'little-endian float32, base64')
      t.throws(() => adaptor.buildRequest(channel, { ...relayRequest('embeddings', { input: [[1, 2]] }), model: 'text-embedding-v4' }), { code: 'PROV_ERR_UNSUPPORTED' })
    })

    t.test('the test request of an embedding model embeds', async (t) => {
      t.match(adaptor.testRequest(channel, 'text-embedding-v4'), { endpoint: 'embeddings', body: { input: 'hi' } })
    })
  }
}
