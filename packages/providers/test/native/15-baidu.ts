// Type 15: Baidu's Wenxin Workshop API (aip.baidubce.com): the key API_KEY|SECRET_KEY is exchanged
// at /oauth/2.0/token for an access token, which every request carries as ?access_token=.
// Errors come with HTTP 200 as {error_code, error_msg}.
import type { ServerResponse } from 'node:http'
import { CredentialError, type ConvertedResponse } from '../../src/index.js'
import { bytesOf, json, MODEL, type NativeProtocol, parsed, readChunks, relay, relayRequest, type Seen } from '../kit.js'

const PREFIX = '/rpc/2.0/ai_custom/v1/wenxinworkshop'
const API_KEY = 'ak-test-15'
const SECRET_KEY = 'sk-test-15'
const USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }

/** Access tokens this server issued, in order; a revoked one is refused with error 110. */
const issued: string[] = []
const revoked = new Set<string>()
let exchanges = 0

/** The chat endpoint Baidu serves a model at (the preset services' own names, else the name in lower case). */
const endpointOf = (model: string): string => ({ 'ERNIE-4.0-8K': 'completions_pro', 'ERNIE-3.5-8K': 'completions' } as Record<string, string>)[model] ?? model.toLowerCase()

const current = (): string => issued.at(-1) ?? 'none'

const ernie = (fields: Record<string, unknown>) => ({ id: 'as-15', object: 'chat.completion', created: 1700000000, is_truncated: false, need_clear_history: false, ...fields })

/** ERNIE's stream framing: one `data:` event per object, LF line ends. */
const events = (list: Array<Record<string, unknown>>): string => list.map((event, i) => `data: ${JSON.stringify(ernie({ sentence_id: i, ...event }))}\n\n`).join('')

const baiduError = (code: number, msg: string) => JSON.stringify({ error_code: code, error_msg: msg })

function tokenOf (seen: Seen): string | null {
  return new URL(seen.url, 'http://x').searchParams.get('access_token')
}

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 15, type: 15, key: `${API_KEY}|${SECRET_KEY}`, baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: `${API_KEY}|sk-wrong`,
  auxiliary: (res: ServerResponse, seen: Seen) => {
    const url = new URL(seen.url, 'http://x')
    if (url.pathname !== '/oauth/2.0/token') return false
    exchanges++
    const q = url.searchParams
    if (seen.method !== 'POST' || q.get('grant_type') !== 'client_credentials') {
      json(res, 400, { error: 'unsupported_grant_type', error_description: 'unsupported grant type' })
    } else if (q.get('client_id') !== API_KEY) {
      json(res, 401, { error: 'invalid_client', error_description: 'unknown client id' })
    } else if (q.get('client_secret') !== SECRET_KEY) {
      json(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' })
    } else {
      const token = `24.tok15-${issued.length + 1}.2592000.1700000000.282335-1`
      issued.push(token)
      json(res, 200, { refresh_token: 'r', expires_in: 2592000, session_key: 's', access_token: token, scope: 'public', session_secret: 'x' })
    }
    return true
  },
  authorized: (seen) => {
    const token = tokenOf(seen)
    return token !== null && issued.includes(token) && !revoked.has(token) && seen.headers.authorization === undefined
  },
  refuse: (res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(baiduError(110, 'Access token invalid or no longer valid'))
  },
  chat: {
    path: (model) => `${PREFIX}/chat/${endpointOf(model)}?access_token=${encodeURIComponent(current())}`,
    answer: ernie({ result: 'Hello there', finish_reason: 'normal', usage: USAGE }),
    stream: () => events([
      { result: 'Héllo, ', is_end: false, finish_reason: 'normal', usage: { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 } },
      { result: 'wörld 你好 🎉', is_end: true, finish_reason: 'normal', usage: USAGE }
    ]),
    tools: {
      answer: ernie({ result: '', finish_reason: 'function_call', function_call: { name: 'get_weather', arguments: '{"city":"Paris"}', thoughts: 'I should look it up.' }, usage: USAGE }),
      stream: () => events([
        { result: '', is_end: true, finish_reason: 'function_call', function_call: { name: 'get_weather', arguments: '{"city":"Paris"}', thoughts: 'I should look it up.' }, usage: USAGE }
      ])
    },
    checkBody: (t, body) => {
      t.equal(body.system, 'Be brief.', 'system prompt')
      t.same(body.messages, [{ role: 'user', content: 'Weather in Paris?' }], 'messages')
      t.same(body.functions, [{ name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }], 'functions')
      t.equal(body.model, undefined, 'the model is in the URL')
    },
    usage: { promptTokens: 12, completionTokens: 7 }
  },
  endpoints: ['embeddings'],
  defaultUrls: (_channel, model) => ({ chat: `https://aip.baidubce.com${PREFIX}/chat/${endpointOf(model)}` }),
  errors: [
    { what: '200 token expired', status: 200, body: baiduError(111, 'Access token expired'), action: 'retry', code: '111' },
    { what: '200 QPS limit', status: 200, body: baiduError(18, 'Open api qps request limit reached'), action: 'retry', code: '18' },
    { what: '200 RPM limit', status: 200, body: baiduError(336501, 'Rate limit reached for RPM'), action: 'retry', code: '336501' },
    { what: '200 high load', status: 200, body: baiduError(336100, 'system is busy'), action: 'retry', code: '336100' },
    { what: '200 daily limit', status: 200, body: baiduError(17, 'Open api daily request limit reached'), action: 'disable', code: '17' },
    { what: '200 total limit', status: 200, body: baiduError(19, 'Open api total request limit reached'), action: 'disable', code: '19' },
    { what: '200 no permission', status: 200, body: baiduError(6, 'No permission to access data'), action: 'disable', code: '6' },
    { what: '200 bad parameters', status: 200, body: baiduError(336003, 'the first message must be user'), action: 'client', code: '336003' },
    { what: '200 unknown service', status: 200, body: baiduError(336005, 'API name not exist'), action: 'client', code: '336005' },
    { what: '500 Baidu error', status: 500, body: baiduError(336000, 'Internal error'), action: 'retry', code: '336000' }
  ],
  extra: async (t, { up, channel, adaptor, serve, send }) => {
    const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
    const convert = async (r: typeof req, res: Response): Promise<ConvertedResponse> =>
      adaptor.convertResponse(channel, r, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))

    t.test('one access token serves every request until Baidu calls it invalid', async (t) => {
      serve(fixture.chat?.answer)
      const before = exchanges
      for (let i = 0; i < 3; i++) t.equal((await send(req)).status, 200)
      t.equal(exchanges, before, 'the cached token is reused')
      const token = current()
      revoked.add(token)
      const refused = await convert(req, await send(req))
      t.match(refused, { status: 401, failure: { action: 'retry', code: '110' } }, 'HTTP 200 with error 110 is a failure to retry')
      t.equal(exchanges, before, 'no exchange yet')
      const res = await send(req)
      t.equal(exchanges, before + 1, 'the refused token was dropped: a new one is obtained')
      t.not(current(), token)
      t.equal(tokenOf(up.last()), current())
      t.match(await convert(req, res), { status: 200, usage: { promptTokens: 12, completionTokens: 7 } })
    })

    t.test('errors sent with HTTP 200 are failures, not answers', async (t) => {
      for (const [code, action, status] of [[336003, 'client', 400], [18, 'retry', 429], [17, 'disable', 403], [336005, 'client', 404]] as const) {
        serve({ error_code: code, error_msg: `error ${code}` })
        const converted = await convert(req, await send(req))
        t.match(converted, { status, failure: { action, code: String(code), message: `error ${code} (Baidu error ${code})` } }, String(code))
        t.equal(converted.usage, undefined)
      }
      // A streamed request refused at once gets JSON, which the relay converts as a complete answer.
      serve({ error_code: 336003, error_msg: 'bad' })
      const streamed = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      const res = await send(streamed)
      t.match(res.headers.get('content-type'), /json/)
      t.equal(adaptor.isStream, undefined, 'only event streams are streams')
      t.match(await convert(streamed, res), { failure: { action: 'client' } })
    })

    t.test('an error event after content ends the stream with an OpenAI error chunk', async (t) => {
      serve(events([{ result: 'Hi', is_end: false }]) + `data: ${baiduError(336100, 'system is busy')}\n\n`)
      const streamed = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      const converter = adaptor.createStream(channel, streamed)
      const relayed = await relay(await send(streamed), converter)
      const out = relayed.out + relayed.tail
      t.match(out, /"error":\{"message":"system is busy \(Baidu error 336100\)"/)
      t.notOk(converter.finished())
      t.equal(readChunks(out.split('\n\n').filter((e) => !e.includes('"error"')).join('\n\n')).content, 'Hi')
    })

    t.test('converts turns, tool results and sampling to ERNIE\'s form', async (t) => {
      serve(fixture.chat?.answer)
      await send(relayRequest('chat', {
        messages: [
          { role: 'system', content: 'S1' },
          { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
          { role: 'user', content: 'c' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_9', content: '{"temp":21}' }
        ],
        temperature: 0, top_p: 0.5, max_tokens: 100, stop: 'END', user: 'u-1', penalty_score: 1.2, response_format: { type: 'json_object' },
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }], tool_choice: { type: 'function', function: { name: 'get_weather' } }
      }))
      const body = parsed(up.last().body)
      t.same(body.messages, [
        { role: 'user', content: 'ab\nc' },
        { role: 'assistant', content: '', function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { role: 'function', name: 'get_weather', content: '{"temp":21}' }
      ])
      t.match(body, { system: 'S1', temperature: 0.01, top_p: 0.5, max_output_tokens: 100, stop: ['END'], user_id: 'u-1', penalty_score: 1.2, response_format: 'json_object', tool_choice: { type: 'function', function: { name: 'get_weather' } } })
      t.equal(body.stream, undefined)
      await send(relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'none' }))
      t.equal(parsed(up.last().body).functions, undefined, 'tool_choice none sends no functions')
    })

    t.test('a need_clear_history answer is finished by content_filter', async (t) => {
      serve(ernie({ result: '我无法回答', need_clear_history: true, ban_round: -1, finish_reason: 'normal', usage: USAGE }))
      const answer = parsed(Buffer.from((await convert(req, await send(req))).body))
      t.match(answer, { choices: [{ finish_reason: 'content_filter', message: { content: '我无法回答' } }] })
    })

    t.test('embeddings: text in, OpenAI\'s list out (floats or base64)', async (t) => {
      const vectors = [[0.5, -0.25], [1, 0]]
      serve({ id: 'as-e', object: 'embedding_list', created: 1700000000, data: vectors.map((embedding, index) => ({ object: 'embedding', embedding, index })), usage: { prompt_tokens: 6, total_tokens: 6 } })
      const embed = relayRequest('embeddings', { model: 'Embedding-V1', input: ['a', 'b'] })
      embed.model = 'Embedding-V1'
      const res = await send(embed)
      const seen = up.last()
      t.equal(new URL(seen.url, 'http://x').pathname, `${PREFIX}/embeddings/embedding-v1`)
      t.same(parsed(seen.body), { input: ['a', 'b'] })
      const converted = await convert(embed, res)
      t.same(converted.usage, { promptTokens: 6, completionTokens: 0 })
      t.same(parsed(Buffer.from(converted.body)), { object: 'list', data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })), model: 'Embedding-V1', usage: { prompt_tokens: 6, total_tokens: 6 } })
      const b64 = { ...embed, body: { ...embed.body, input: 'a', encoding_format: 'base64' } }
      const encoded = parsed(Buffer.from((await convert(b64, await send(b64))).body)) as { data: Array<{ embedding: string }> }
      t.same(parsed(up.last().body), { input: ['a'] }, 'one text becomes a list')
      const floats = new Float32Array(new Uint8Array(Buffer.from(encoded.data[0]?.embedding ?? '', 'base64')).buffer)
      t.same([...floats], vectors[0], 'base64 of little-endian float32')
      t.equal(adaptor.testRequest(channel, 'bge-large-zh').endpoint, 'embeddings', 'embedding models are tested with an embedding')
      const bge = adaptor.buildRequest(channel, { ...embed, model: 'bge-large-zh' })
      t.match(bge.url, /\/embeddings\/bge_large_zh$/)
    })

    t.test('a key not written API_KEY|SECRET_KEY is refused before any call', async (t) => {
      const before = up.seen.length
      for (const key of ['only-one-part', 'a|b|c', '|secret']) {
        await t.rejects(send(req, { ...channel, key }), CredentialError)
      }
      t.equal(up.seen.length, before)
      const err = await send(req, { ...channel, key: 'nope' }).catch((e: unknown) => e)
      t.match(err, { action: 'disable' })
    })

    t.test('maps model names to Baidu\'s endpoints', async (t) => {
      const url = (model: string) => new URL(adaptor.buildRequest(channel, { ...req, model }).url).pathname
      t.equal(url('ERNIE-4.0-8K'), `${PREFIX}/chat/completions_pro`)
      t.equal(url('ERNIE-3.5-8K'), `${PREFIX}/chat/completions`)
      t.equal(url('ERNIE-Speed-8K'), `${PREFIX}/chat/ernie_speed`)
      t.equal(url('ERNIE-Speed-128K'), `${PREFIX}/chat/ernie-speed-128k`)
      t.equal(url('ERNIE-Lite-8K'), `${PREFIX}/chat/ernie-lite-8k`)
      t.equal(url('ERNIE-4.0-Turbo-8K'), `${PREFIX}/chat/ernie-4.0-turbo-8k`)
      t.equal(url(MODEL), `${PREFIX}/chat/${MODEL}`)
    })
  }
}
