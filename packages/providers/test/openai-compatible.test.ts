// The OpenAI-wire building blocks on inputs that are awkward to produce through a server:
// line-ending variants, cut streams, provider-specific usage and error shapes.
import t from 'tap'
import {
  classifyOpenAIFailure,
  openAICompatible,
  openAIErrorBody,
  ProviderError,
  type ChannelConfig,
  type RelayRequest,
  type StreamConverter
} from '../src/index.js'

const adaptor = openAICompatible({ type: 1000, name: 'Test', defaultBaseUrl: 'https://upstream.test', defaultModels: ['m'] })
const channel: ChannelConfig = { id: 1, type: 1000, key: 'sk-x', baseUrl: '', other: '', organization: null, setting: {} }
const chat = (over: Partial<RelayRequest> = {}): RelayRequest => ({ endpoint: 'chat', format: 'openai', model: 'm', stream: true, body: {}, ...over })

/** Pushes `text` one UTF-8 byte at a time; returns what the client would receive. */
function pushBytes (converter: StreamConverter, text: string): string {
  let out = ''
  for (const byte of Buffer.from(text)) out += converter.push(Buffer.from([byte])).toString()
  return out
}

t.test('the stream reader handles CRLF and CR line endings split across chunks', async (t) => {
  const converter = adaptor.createStream(channel, chat())
  const out = pushBytes(converter, 'data: {"choices":[{"delta":{"content":"a"}}]}\r\n\r\ndata:{"choices":[{"delta":{"content":"b"}}]}\r\rdata: [DONE]\r\n\r\n')
  t.equal(out, 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"delta":{"content":"b"}}]}\n\ndata: [DONE]\n\n')
  t.equal(converter.takeText(), 'ab')
  t.ok(converter.finished())
})

t.test('multi-line data, id and retry fields, and comments', async (t) => {
  const converter = adaptor.createStream(channel, chat())
  const out = pushBytes(converter, ': keep-alive\n\nid: 7\nretry: 1000\ndata: {"choices":\ndata: [{"delta":{"content":"x"}}]}\n\n:\n\n')
  t.equal(out, 'data: {"choices":\ndata: [{"delta":{"content":"x"}}]}\n\n', 'data lines kept together, other fields dropped')
  t.equal(converter.takeText(), 'x', 'the joined data is read as one JSON value')
  t.notOk(converter.finished())
})

t.test('end() forwards a complete last event without its blank line and drops a cut one', async (t) => {
  const complete = adaptor.createStream(channel, chat())
  t.equal(complete.push(Buffer.from('data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}\n\ndata: [DONE]')).toString(), 'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}\n\n')
  t.equal(complete.end().toString(), 'data: [DONE]\n\n')
  t.ok(complete.finished())
  t.same(complete.usage(), { promptTokens: 3, completionTokens: 4 })

  const cut = adaptor.createStream(channel, chat())
  t.equal(cut.push(Buffer.from('data: {"choices":[{"delta":{"content":"caf')).length, 0)
  t.equal(cut.push(Buffer.from([0xc3])).length, 0, 'half of é')
  t.equal(cut.end().length, 0)
  t.notOk(cut.finished())
  t.equal(cut.takeText(), '')
})

t.test('any stream, cut anywhere: the normal form of each complete event, its text in order, its usage', async (t) => {
  let seed = 11
  const rand = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
  for (let round = 0; round < 200; round++) {
    let wire = ''
    let expected = ''
    let text = ''
    let usage: { promptTokens: number, completionTokens: number } | undefined
    const events = 1 + rand(12)
    for (let i = 0; i < events; i++) {
      const eol = ['\n', '\n', '\n', '\r\n', '\r'][rand(5)]!
      const word = ['Hé', 'llo', ' 你好', ' 🎉', '"q"', '\\n'][rand(6)]!
      const kind = rand(6)
      if (kind === 0) {
        wire += `: keep-alive${eol}${eol}`
        continue
      }
      let payload: string
      let name: string | undefined
      if (kind === 1) {
        usage = { promptTokens: 1 + rand(50), completionTokens: rand(50) }
        payload = JSON.stringify({ choices: [], usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens } })
      } else if (kind === 2) {
        name = 'response.output_text.delta'
        payload = JSON.stringify({ type: name, delta: word })
        text += word
      } else {
        payload = JSON.stringify({ choices: [{ index: 0, delta: { content: word } }], usage: null })
        text += word
      }
      // Data split over two lines (still one JSON value), `data:` without its space, extra fields.
      const lines = rand(4) === 0 ? [payload.slice(0, 1), payload.slice(1)] : [payload]
      if (rand(5) === 0) wire += `id: ${i}${eol}`
      if (name !== undefined) wire += `event: ${name}${eol}`
      for (const line of lines) wire += `data:${rand(4) === 0 ? '' : ' '}${line}${eol}`
      wire += eol
      expected += `${name === undefined ? '' : `event: ${name}\n`}${lines.map((l) => `data: ${l}\n`).join('')}\n`
    }
    wire += 'data: [DONE]\n\n'
    expected += 'data: [DONE]\n\n'
    const bytes = Buffer.from(wire)
    const converter = adaptor.createStream(channel, chat())
    const out: Buffer[] = []
    for (let at = 0; at < bytes.length;) {
      const size = 1 + rand(rand(3) === 0 ? 4 : 80)
      out.push(converter.push(bytes.subarray(at, at + size)))
      at += size
    }
    out.push(converter.end())
    if (Buffer.concat(out).toString() !== expected) t.fail(`round ${round}: ${JSON.stringify(wire)}`)
    const bytesHeld = converter.untakenBytes()
    if (converter.takeText() !== text || (text !== '' && bytesHeld === 0) || converter.untakenBytes() !== 0) t.fail(`round ${round}: text`)
    if (JSON.stringify(converter.usage()) !== JSON.stringify(usage) || !converter.finished()) t.fail(`round ${round}: usage or end`)
  }
  t.pass('200 random streams cut at random places')
})

t.test('events already in normal form leave as the very bytes received', async (t) => {
  const converter = adaptor.createStream(channel, chat())
  const input = Buffer.from('data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"delta":{"content":"b"}}]}\n\n')
  const out = converter.push(input)
  t.equal(out.buffer, input.buffer, 'a slice of the input, not a copy')
  t.equal(out.byteOffset, input.byteOffset)
  t.equal(out.length, input.length)
  t.ok(converter.untakenBytes() > 0, 'the plain chunks are held unparsed for takeText()')
  t.equal(converter.takeText(), 'ab')
})

t.test('stream text includes reasoning and tool arguments; a later null usage keeps the earlier one', async (t) => {
  const converter = adaptor.createStream(channel, chat())
  const events = [
    { choices: [{ index: 0, delta: { reasoning_content: 'think ' }, finish_reason: null }], usage: null },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'f', arguments: '{"a":' } }] } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '1}' } }] } }] },
    { choices: [], usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29, prompt_cache_hit_tokens: 16 } },
    { choices: [], usage: null }
  ]
  for (const event of events) converter.push(Buffer.from(`data: ${JSON.stringify(event)}\n\n`))
  t.equal(converter.takeText(), 'think {"a":1}')
  t.equal(converter.takeText(), '', 'cleared once taken')
  t.same(converter.usage(), { promptTokens: 20, completionTokens: 9, cachedTokens: 16 }, 'DeepSeek cache hits count as cached tokens')
})

t.test('Moonshot usage inside the last choice is read', async (t) => {
  const converter = adaptor.createStream(channel, chat())
  converter.push(Buffer.from('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":19,"completion_tokens":13,"total_tokens":32}}]}\n\n'))
  t.same(converter.usage(), { promptTokens: 19, completionTokens: 13 })
})

t.test('a responses stream that ends incomplete is finished; a legacy completion stream yields its text', async (t) => {
  const responses = adaptor.createStream(channel, chat({ endpoint: 'responses' }))
  responses.push(Buffer.from('event: response.incomplete\ndata: {"type":"response.incomplete","response":{"status":"incomplete","usage":{"input_tokens":4,"output_tokens":16}}}\n\n'))
  t.ok(responses.finished())
  t.same(responses.usage(), { promptTokens: 4, completionTokens: 16 })

  const completions = adaptor.createStream(channel, chat({ endpoint: 'completions' }))
  completions.push(Buffer.from('data: {"choices":[{"text":"Hello","index":0}]}\n\ndata: {"choices":[{"text":" you","index":0}]}\n\n'))
  t.equal(completions.takeText(), 'Hello you')
})

t.test('non-streamed answers: text of completions, responses and tool calls; non-JSON passes through', async (t) => {
  const convert = (req: RelayRequest, body: unknown) => adaptor.convertResponse(channel, req, 200, 'application/json', Buffer.from(JSON.stringify(body)))
  t.equal(convert(chat({ endpoint: 'completions', stream: false }), { choices: [{ text: 'abc' }] }).text, 'abc')
  const responses = convert(chat({ endpoint: 'responses', stream: false }), {
    object: 'response',
    output: [
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'why ' }] },
      { type: 'message', content: [{ type: 'output_text', text: 'answer', annotations: [] }] }
    ],
    usage: { input_tokens: 7, output_tokens: 3, input_tokens_details: { cached_tokens: 0 } }
  })
  t.equal(responses.text, 'why answer')
  t.same(responses.usage, { promptTokens: 7, completionTokens: 3, cachedTokens: 0 })
  const tools = convert(chat({ stream: false }), {
    choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] } }]
  })
  t.equal(tools.text, '{"x":1}')
  t.equal(tools.usage, undefined, 'no usage reported')
  const text = adaptor.convertResponse(channel, chat({ endpoint: 'audio_transcriptions', stream: false }), 200, 'text/plain', Buffer.from('hello world'))
  t.same(text, { status: 200, contentType: 'text/plain', body: Buffer.from('hello world') })
})

t.test('a multipart body wins over a JSON body and a request without either is refused', async (t) => {
  const raw = { contentType: 'multipart/form-data; boundary=b', data: Buffer.from('--b--\r\n') }
  const built = adaptor.buildRequest(channel, { endpoint: 'images_edits', format: 'openai', model: 'm', stream: false, raw, body: { prompt: 'x' } })
  t.equal(built.body, raw.data)
  t.equal(built.headers['Content-Type'], raw.contentType)
  t.throws(() => adaptor.buildRequest(channel, { endpoint: 'chat', format: 'openai', model: 'm', stream: false }), { code: 'PROV_ERR_NO_BODY' })
  t.throws(() => adaptor.buildRequest(channel, chat({ endpoint: 'messages' })), ProviderError)
})

t.test('the factory composes a URL builder, headers and the stream usage mode', async (t) => {
  const composed = openAICompatible({
    type: 1001,
    name: 'Composed',
    defaultBaseUrl: 'https://api.example.test',
    defaultModels: [],
    urlFor: ({ base, target, model }) => target === 'models' ? undefined : `${base}/${model}/${target}`,
    headersFor: (c) => ({ 'x-api-key': c.key }),
    streamUsage: 'strip'
  })
  const built = composed.buildRequest(channel, chat({ body: { stream: true, stream_options: { include_usage: true }, extra: 1 } }))
  t.equal(built.url, 'https://api.example.test/m/chat')
  t.same(built.headers, { 'x-api-key': 'sk-x', 'Content-Type': 'application/json' })
  t.same(JSON.parse(String(built.body)), { stream: true, extra: 1, model: 'm' })
  t.equal(composed.listModelsRequest(channel), undefined)
  t.ok(Object.isFrozen(composed) && Object.isFrozen(composed.defaultModels))
  const odd = adaptor.buildRequest(channel, chat({ body: { stream_options: 'bogus' } }))
  t.same(JSON.parse(String(odd.body)).stream_options, { include_usage: true }, 'a malformed stream_options is replaced')
})

t.test('channel test requests fit the model kind', async (t) => {
  t.match(adaptor.testRequest(channel, 'text-embedding-3-small'), { endpoint: 'embeddings', body: { input: 'hi' } })
  t.match(adaptor.testRequest(channel, 'BAAI/bge-m3'), { endpoint: 'embeddings' })
  t.match(adaptor.testRequest(channel, 'BAAI/bge-reranker-v2-m3'), { endpoint: 'rerank', body: { query: 'hi', documents: ['hi'] } })
  t.match(adaptor.testRequest(channel, 'omni-moderation-latest'), { endpoint: 'moderations' })
  t.match(adaptor.testRequest(channel, 'o3-mini'), { endpoint: 'chat', body: { max_completion_tokens: 16 } })
  t.match(adaptor.testRequest(channel, 'deepseek-chat'), { endpoint: 'chat', stream: false, body: { max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } })
})

t.test('exhausted accounts of compatible providers disable the channel', async (t) => {
  const cases: Array<[number, string]> = [
    [402, '{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}'],
    [400, '{"code":30001,"message":"Sorry, your account balance is insufficient","data":null}'],
    [429, '{"error":{"message":"Your account org-1 is suspended, please check your plan and billing details","type":"exceeded_current_quota_error"}}'],
    [400, '{"error":{"message":"Your credit balance is too low to access the API.","type":"invalid_request_error"}}'],
    [404, '{"error":{"message":"Your account is deactivated.","type":"invalid_request_error","code":"account_deactivated"}}']
  ]
  for (const [status, body] of cases) t.equal(classifyOpenAIFailure(status, body).action, 'disable', body)
  t.same(classifyOpenAIFailure(400, '{"code":30001,"message":"Sorry, your account balance is insufficient","data":null}').code, '30001')
})

t.test('failure messages never carry keys or links', async (t) => {
  const azureKey = '0123456789abcdef0123456789abcdef'
  const failure = classifyOpenAIFailure(401, JSON.stringify({ error: { code: '401', message: `Access denied due to invalid subscription key ${azureKey} or wrong API endpoint https://res.openai.azure.com/openai.` } }))
  t.equal(failure.message, 'Access denied due to invalid subscription key *** or wrong API endpoint [redacted].')
  t.equal(failure.action, 'disable')
  t.notMatch(classifyOpenAIFailure(400, '{"error":{"message":"bad header Authorization: Bearer sk-abc123456"}}').message, /abc123456/)
  t.ok(classifyOpenAIFailure(400, JSON.stringify({ error: { message: 'x'.repeat(5000) } })).message.length <= 300, 'long messages are cut to 300 characters')
  t.same(classifyOpenAIFailure(400, 'Bad Request'), { action: 'client', message: 'upstream answered HTTP 400' })
  t.same(classifyOpenAIFailure(400, '{"error":"model is required"}'), { action: 'client', message: 'model is required' })
  t.equal(classifyOpenAIFailure(302, '').action, 'retry', 'a redirect is no answer: try another channel')
})

t.test('openAIErrorBody writes the OpenAI error envelope', async (t) => {
  t.same(JSON.parse(openAIErrorBody('No channel for model x', 'invalid_request_error', 'model_not_found')), {
    error: { message: 'No channel for model x', type: 'invalid_request_error', param: null, code: 'model_not_found' }
  })
  t.same(JSON.parse(openAIErrorBody('busy', 'server_error')), { error: { message: 'busy', type: 'server_error', param: null, code: null } })
})

t.test('audio token details are read from chat and realtime usage', async (t) => {
  const { readUsage } = await import('../src/openai-compatible/usage.js')
  t.same(readUsage({
    prompt_tokens: 120, completion_tokens: 80, total_tokens: 200,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 100 },
    completion_tokens_details: { audio_tokens: 60, reasoning_tokens: 0 }
  }), { promptTokens: 120, completionTokens: 80, cachedTokens: 0, audioPromptTokens: 100, audioCompletionTokens: 60 })
  t.same(readUsage({ input_tokens: 50, output_tokens: 30, input_token_details: { audio_tokens: 40 }, output_token_details: { audio_tokens: 500 } }),
    { promptTokens: 50, completionTokens: 30, audioPromptTokens: 40, audioCompletionTokens: 30 }, 'audio counts never exceed their totals')
  t.same(readUsage({ prompt_tokens: 5, completion_tokens: 1, prompt_tokens_details: { audio_tokens: 0 } }), { promptTokens: 5, completionTokens: 1 }, 'zero audio adds nothing')
})
