// Type 39: Cloudflare Workers AI's OpenAI-compatible endpoints under
// /client/v4/accounts/{account ID}/ai/v1 (api.cloudflare.com), an API token as the Bearer key,
// the account ID in the channel's `other`; errors in Cloudflare's {success, errors} envelope.
import { CredentialError, testChannel, type ConvertedResponse, type RelayRequest } from '../../src/index.js'
import { bytesOf, MODEL, type NativeProtocol, parsed, relayRequest, WEATHER_TOOL } from '../kit.js'

const ACCOUNT = '0123456789abcdef0123456789abcdef'
const PREFIX = `/client/v4/accounts/${ACCOUNT}/ai/v1`
const TOKEN = 'cf-token-39-Zx8d2b1PqR'
const USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }

const cfError = (code: number, message: string) => JSON.stringify({ success: false, errors: [{ code, message }], messages: [], result: null })

const base = { id: 'chatcmpl-cf', object: 'chat.completion.chunk', created: 1_700_000_000, model: MODEL }
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })
const sse = (events: unknown[]): string => events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('') + 'data: [DONE]\n\n'

const completion = (message: Record<string, unknown>, finish: string) => ({
  id: 'chatcmpl-cf', object: 'chat.completion', created: 1_700_000_000, model: MODEL,
  choices: [{ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finish }], usage: USAGE
})

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 39, type: 39, key: TOKEN, baseUrl: origin, other: ACCOUNT, organization: null, setting: {} }),
  wrongKey: 'cf-wrong-token',
  authorized: (seen, channel) => seen.headers.authorization === `Bearer ${channel.key}` && seen.url.startsWith(`/client/v4/accounts/${ACCOUNT}/`),
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(cfError(10000, 'Authentication error'))
  },
  chat: {
    path: () => `${PREFIX}/chat/completions`,
    answer: completion({ content: 'Hello there' }, 'stop'),
    stream: () => sse([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Héllo, ' }),
      chunk({ content: 'wörld 你好 🎉' }),
      chunk({}, 'stop'),
      { ...base, choices: [], usage: USAGE }
    ]),
    tools: {
      answer: completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, 'tool_calls'),
      stream: () => sse([
        chunk({ role: 'assistant', content: '' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }),
        chunk({}, 'tool_calls'),
        { ...base, choices: [], usage: USAGE }
      ])
    },
    checkBody: (t, body) => {
      t.same(body, { model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER_TOOL] }, 'the client\'s body with the upstream model')
    },
    usage: { promptTokens: 12, completionTokens: 7 }
  },
  endpoints: ['embeddings', 'responses'],
  models: {
    path: `/client/v4/accounts/${ACCOUNT}/ai/models/search?task=Text%20Generation`,
    answer: {
      success: true, errors: [], messages: [],
      result: [
        { id: 'f1', name: 'model-a', description: 'A', task: { id: 't', name: 'Text Generation' }, properties: [] },
        { id: 'f2', name: 'model-b', description: 'B', task: { id: 't', name: 'Text Generation' }, properties: [] }
      ],
      result_info: { count: 2, page: 1, per_page: 20, total_count: 2 }
    }
  },
  errors: [
    { what: '401 authentication error', status: 401, body: cfError(10000, 'Authentication error'), action: 'disable', code: '10000' },
    { what: '403 account blocked', status: 403, body: cfError(3023, 'Service unavailable for account'), action: 'disable', code: '3023' },
    { what: '429 daily free allocation used up', status: 429, body: cfError(3036, "Account limited: you have used up your daily free allocation of 10,000 neurons, please upgrade to Cloudflare's Workers Paid plan if you would like to continue usage."), action: 'disable', code: '3036' },
    { what: '404 no such account', status: 404, body: cfError(7003, 'Could not route to /client/v4/accounts/abc/ai/v1/chat/completions, perhaps your object identifier is invalid?'), action: 'disable', code: '7003' },
    { what: '429 out of capacity', status: 429, body: cfError(3040, 'Capacity temporarily exceeded, please try again.'), action: 'retry', code: '3040' },
    { what: '408 timeout', status: 408, body: cfError(3007, 'Request timeout'), action: 'retry', code: '3007' },
    { what: '403 model terms not agreed', status: 403, body: cfError(5016, 'User has not agreed to Llama3.2 model terms'), action: 'retry', code: '5016' },
    { what: '400 no such model', status: 400, body: cfError(5007, 'No such model @cf/nobody/nothing or task'), action: 'client', code: '5007' },
    { what: '404 no route', status: 404, body: cfError(7000, 'No route for that URI'), action: 'client', code: '7000' },
    { what: '500 internal', status: 500, body: cfError(3043, 'Internal server error'), action: 'retry', code: '3043' },
    { what: '400 OpenAI-style envelope', status: 400, body: JSON.stringify({ error: { message: 'messages: Required', type: 'invalid_request_error' } }), action: 'client', code: 'invalid_request_error' }
  ],
  extra: async (t, { up, channel, adaptor, serve, send }) => {
    const convert = async (req: RelayRequest, res: Response): Promise<ConvertedResponse> =>
      adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))

    t.test('a channel without an account ID is refused before any call, and disabled', async (t) => {
      const before = up.seen.length
      const bare = { ...channel, other: ' ' }
      t.throws(() => adaptor.buildRequest(bare, relayRequest('chat', { messages: [] })), CredentialError)
      try {
        adaptor.buildRequest(bare, relayRequest('chat', { messages: [] }))
      } catch (err) {
        t.match(err, { action: 'disable', message: /account ID/ })
      }
      t.throws(() => adaptor.buildRequest({ ...channel, other: 'abc/../x' }, relayRequest('chat', { messages: [] })), CredentialError, 'an account ID that is not one')
      t.match(await testChannel(adaptor, bare, MODEL), { ok: false, action: 'disable', message: /account ID/ })
      t.equal(up.seen.length, before, 'nothing was sent')
    })

    t.test('embeddings and responses go to their Workers AI paths, usage read', async (t) => {
      serve({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: '@cf/baai/bge-m3', usage: { prompt_tokens: 3, total_tokens: 3 } })
      const embed: RelayRequest = { ...relayRequest('embeddings', { input: 'hi', encoding_format: 'float' }), model: '@cf/baai/bge-m3' }
      const converted = await convert(embed, await send(embed))
      t.equal(up.last().url, `${PREFIX}/embeddings`)
      t.same(parsed(up.last().body), { input: 'hi', encoding_format: 'float', model: '@cf/baai/bge-m3' })
      t.same(converted.usage, { promptTokens: 3, completionTokens: 0 })
      t.equal(adaptor.testRequest(channel, '@cf/baai/bge-m3').endpoint, 'embeddings')
      const b64: RelayRequest = { ...embed, body: { input: 'hi', encoding_format: 'base64' } }
      const encoded = parsed(Buffer.from((await convert(b64, await send(b64))).body)) as { data: Array<{ embedding: string }> }
      t.equal(parsed(up.last().body).encoding_format, 'base64', 'the client\'s encoding asked for')
      const floats = new Float32Array(new Uint8Array(Buffer.from(encoded.data[0]?.embedding ?? '', 'base64')).buffer)
      t.same([...floats].map((f) => Math.round(f * 1000) / 1000), [0.1, 0.2], 'floats sent anyway are encoded as OpenAI\'s base64')
      serve({ id: 'resp_1', object: 'response', status: 'completed', output: [], usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } })
      const responses: RelayRequest = relayRequest('responses', { input: 'hi' })
      t.same((await convert(responses, await send(responses))).usage, { promptTokens: 5, completionTokens: 2 })
      t.equal(up.last().url, `${PREFIX}/responses`)
      t.notOk(adaptor.supports('completions', 'openai'))
      t.throws(() => adaptor.buildRequest(channel, relayRequest('images_generations', { prompt: 'x' })))
    })

    t.test('a base URL with a path is the OpenAI prefix itself (AI Gateway), the account ID then not needed', async (t) => {
      const gateway = { ...channel, other: '', baseUrl: 'https://gateway.ai.cloudflare.com/v1/acc/gw/workers-ai/v1' }
      t.equal(adaptor.buildRequest(gateway, relayRequest('chat', { messages: [] })).url, 'https://gateway.ai.cloudflare.com/v1/acc/gw/workers-ai/v1/chat/completions')
      t.equal(adaptor.listModelsRequest(gateway), undefined, 'no model search behind AI Gateway')
      const pasted = { ...channel, other: '', baseUrl: `https://api.cloudflare.com/client/v4/accounts/${ACCOUNT}/ai/v1` }
      t.equal(adaptor.buildRequest(pasted, relayRequest('embeddings', { input: 'x' })).url, `https://api.cloudflare.com${PREFIX}/embeddings`)
      t.equal(adaptor.listModelsRequest(pasted)?.url, `https://api.cloudflare.com/client/v4/accounts/${ACCOUNT}/ai/models/search?task=Text%20Generation`)
    })

    t.test('the channel test passes with the token and disables on a wrong one', async (t) => {
      serve(fixture.chat?.answer)
      t.match(await testChannel(adaptor, channel, '@cf/meta/llama-3.3-70b-instruct-fp8-fast'), { ok: true })
      t.match(await testChannel(adaptor, { ...channel, key: 'cf-wrong' }, '@cf/meta/llama-3.3-70b-instruct-fp8-fast'), { ok: false, action: 'disable', message: 'Authentication error' })
    })
  }
}
