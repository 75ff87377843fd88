// Type 35: MiniMax's chat API (/v1/text/chatcompletion_v2 on api.minimax.io), Bearer key. The
// body is OpenAI's; answers add `base_resp` (an error there comes with HTTP 200), reasoning
// models write `<think>…</think>` at the start of the content, and the last stream chunk repeats
// the whole message with the usage.
import { splitThink, thinkSplitter } from '../../src/minimax/index.js'
import type { ConvertedResponse, RelayRequest } from '../../src/index.js'
import { bytesOf, MODEL, type NativeProtocol, parsed, readChunks, relay, relayRequest, WEATHER_TOOL } from '../kit.js'

const KEY = 'mm-test-35-eyJhbGciOiJSUzI1NiJ9'
const USAGE = { total_tokens: 19, prompt_tokens: 12, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 4 } }
const OK = { status_code: 0, status_msg: '' }

const minimaxError = (code: number, msg: string) => JSON.stringify({ id: '', choices: null, created: 0, model: '', object: '', usage: null, base_resp: { status_code: code, status_msg: msg } })

const completion = (message: Record<string, unknown>, finish: string) => ({
  id: 'mm-1', choices: [{ finish_reason: finish, index: 0, message: { role: 'assistant', name: 'MiniMax AI', audio_content: '', ...message } }],
  created: 1_700_000_000, model: MODEL, object: 'chat.completion', usage: USAGE, input_sensitive: false, output_sensitive: false,
  input_sensitive_type: 0, output_sensitive_type: 0, output_sensitive_int: 0, base_resp: OK
})

const head = { id: 'mm-s', created: 1_700_000_000, model: MODEL, object: 'chat.completion.chunk' }
const delta = (value: Record<string, unknown>) => ({ ...head, choices: [{ index: 0, delta: { role: 'assistant', ...value } }] })
/** The last chunk: the finish reason, the whole message again, usage and base_resp. */
const last = (message: Record<string, unknown>, finish: string) => ({ ...completion(message, finish), id: 'mm-s' })
/** MiniMax's stream framing: `data:` events, no [DONE]. */
const events = (list: unknown[]): string => list.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('')

const CALL = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 35, type: 35, key: KEY, baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'mm-wrong',
  authorized: (seen, channel) => seen.headers.authorization === `Bearer ${channel.key}`,
  refuse: (res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(minimaxError(1004, "login fail: Please carry the API secret key in the 'Authorization' field of the request header"))
  },
  chat: {
    path: () => '/v1/text/chatcompletion_v2',
    answer: completion({ content: 'Hello there' }, 'stop'),
    stream: () => events([
      delta({ content: 'Héllo, ' }),
      delta({ content: 'wörld 你好 🎉' }),
      last({ content: 'Héllo, wörld 你好 🎉' }, 'stop')
    ]),
    tools: {
      answer: completion({ content: '', tool_calls: [CALL] }, 'tool_calls'),
      stream: () => events([
        delta({ tool_calls: [{ index: 0, ...CALL, function: { name: 'get_weather', arguments: '' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }),
        last({ content: '', tool_calls: [CALL] }, 'tool_calls')
      ])
    },
    checkBody: (t, body) => {
      t.same(body, { model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER_TOOL] }, 'the client\'s body with the upstream model')
    }
  },
  errors: [
    { what: '200 login fail', status: 200, body: minimaxError(1004, 'login fail'), action: 'disable', code: '1004' },
    { what: '200 invalid api key', status: 200, body: minimaxError(2049, 'invalid api key'), action: 'disable', code: '2049' },
    { what: '200 insufficient balance', status: 200, body: minimaxError(1008, 'insufficient balance'), action: 'disable', code: '1008' },
    { what: '200 rate limit', status: 200, body: minimaxError(1002, 'rate limit exceeded(RPM)'), action: 'retry', code: '1002' },
    { what: '200 token limit', status: 200, body: minimaxError(1039, 'token limit'), action: 'retry', code: '1039' },
    { what: '200 internal', status: 200, body: minimaxError(1000, 'unknown error'), action: 'retry', code: '1000' },
    { what: '200 invalid params', status: 200, body: minimaxError(2013, 'invalid params, tool call id is invalid'), action: 'client', code: '2013' },
    { what: '200 sensitive input', status: 200, body: minimaxError(1026, 'input new_sensitive'), action: 'client', code: '1026' },
    { what: '401 OpenAI-style', status: 401, body: JSON.stringify({ error: { message: 'Unauthorized', type: 'authentication_error' } }), action: 'disable', code: 'authentication_error' },
    { what: '502 bad gateway', status: 502, body: '<html>502 Bad Gateway</html>', action: 'retry' }
  ],
  defaultUrls: () => ({ chat: 'https://api.minimax.io/v1/text/chatcompletion_v2' }),
  extra: async (t, { up, channel, adaptor, serve, send }) => {
    const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
    const streamed = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
    const convert = async (r: RelayRequest, res: Response): Promise<ConvertedResponse> =>
      adaptor.convertResponse(channel, r, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))

    t.test('errors sent with HTTP 200 are failures with the status they stand for, never answers', async (t) => {
      for (const [code, action, status] of [[1004, 'disable', 401], [1008, 'disable', 402], [1002, 'retry', 429], [2013, 'client', 400], [1027, 'client', 400], [1999, 'retry', 500], [2999, 'client', 400]] as const) {
        serve(JSON.parse(minimaxError(code, `error ${code}`)))
        const converted = await convert(req, await send(req))
        t.match(converted, { status, failure: { action, code: String(code), message: `error ${code}` } }, String(code))
        t.equal(converted.usage, undefined)
        t.match(parsed(Buffer.from(converted.body)), { error: { message: `error ${code}`, code: String(code) } })
      }
      // A streamed request refused at once gets JSON, which the relay converts as a complete answer.
      serve(JSON.parse(minimaxError(1004, 'login fail')))
      const res = await send(streamed)
      t.match(res.headers.get('content-type'), /json/)
      t.match(await convert(streamed, res), { failure: { action: 'disable' } })
    })

    t.test('the <think> block becomes reasoning_content, and goes back as <think> in later turns', async (t) => {
      serve(completion({ content: '<think>\nThe user greets me.\n</think>\n\nHello!' }, 'stop'))
      const converted = await convert(req, await send(req))
      const answer = parsed(Buffer.from(converted.body))
      t.match(answer, { object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'Hello!', reasoning_content: 'The user greets me.\n' }, finish_reason: 'stop' }] })
      t.notOk('base_resp' in answer, 'MiniMax\'s own fields left out')
      t.equal(converted.text, 'Hello!The user greets me.\n')

      serve(completion({ content: 'Sure.', reasoning_details: [{ type: 'reasoning.text', id: 'r1', format: 'MiniMax-response-v1', index: 0, text: 'Split reasoning.' }] }, 'stop'))
      const split = parsed(Buffer.from((await convert(req, await send(relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], reasoning_split: true })))).body))
      t.match(split, { choices: [{ message: { content: 'Sure.', reasoning_content: 'Split reasoning.' } }] })
      t.equal(parsed(up.last().body).reasoning_split, true, 'MiniMax\'s own fields go through')

      serve(fixture.chat?.answer)
      await send(relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello!', reasoning_content: 'The user greets me.' }, { role: 'user', content: 'again' }] }))
      t.same((parsed(up.last().body).messages as unknown[])[1], { role: 'assistant', content: '<think>\nThe user greets me.\n</think>\n\nHello!' })
    })

    t.test('a streamed <think> block cut anywhere becomes reasoning deltas; usage with reasoning tokens', async (t) => {
      const text = '<think>\nPlan: greet.\n</think>\n\nHi 👋 there'
      const pieces = [text.slice(0, 3), text.slice(3, 12), text.slice(12, 24), text.slice(24, 27), text.slice(27)]
      const usage = { ...USAGE, completion_tokens_details: { reasoning_tokens: 5 } }
      serve(events([...pieces.map((content) => delta({ content })), { ...last({ content: text }, 'stop'), usage }]) + 'data: [DONE]\n\n')
      const converter = adaptor.createStream(channel, streamed)
      const relayed = await relay(await send(streamed), converter)
      const summary = readChunks(relayed.out + relayed.tail)
      t.equal(summary.reasoning, 'Plan: greet.\n')
      t.equal(summary.content, 'Hi 👋 there')
      t.equal(summary.finish, 'stop')
      t.same(summary.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 5 } })
      t.ok(summary.done)
      t.equal((relayed.out.match(/\[DONE\]/g) ?? []).length, 1, 'one [DONE] though MiniMax sent its own')
      t.same(converter.usage(), { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })
      t.equal(relayed.text, 'Plan: greet.\nHi 👋 there')
      t.notMatch(relayed.out, /"message"/, 'the repeated whole message is not sent')
    })

    t.test('tool calls sent only with the final whole message are streamed once', async (t) => {
      serve(events([delta({ content: 'Checking.' }), last({ content: 'Checking.', tool_calls: [CALL] }, 'tool_calls')]))
      const relayed = await relay(await send(streamed), adaptor.createStream(channel, streamed))
      const summary = readChunks(relayed.out + relayed.tail)
      t.equal(summary.content, 'Checking.')
      t.same(summary.toolCalls, [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }])
      t.equal(summary.finish, 'tool_calls')
      t.ok(summary.done)
    })

    t.test('the think splitter holds a tag cut across pieces and lets other text through at once', async (t) => {
      const splitter = thinkSplitter()
      t.same(splitter.push('  <th'), [], 'maybe a tag: held')
      t.same(splitter.push('ink>a</thi'), [{ kind: 'reasoning', text: 'a' }])
      t.same(splitter.push('nk>\n'), [])
      t.same(splitter.push('b'), [{ kind: 'content', text: 'b' }])
      t.same(splitter.end(), [])
      const plain = thinkSplitter()
      t.same(plain.push('<b>bold</b>'), [{ kind: 'content', text: '<b>bold</b>' }], 'another tag is content')
      t.same(plain.push(' <think>x</think>'), [{ kind: 'content', text: ' <think>x</think>' }], 'a think tag later on is content')
      const cut = thinkSplitter()
      t.same(cut.push('<think>never closed </thi'), [{ kind: 'reasoning', text: 'never closed ' }])
      t.same(cut.end(), [{ kind: 'reasoning', text: '</thi' }])
      t.same(splitThink('<thin'), { reasoning: '', content: '<thin' })
      t.same(splitThink('no reasoning'), { reasoning: '', content: 'no reasoning' })
    })

    t.test('an error reported after content ends the stream with an OpenAI error chunk; one before content sends nothing', async (t) => {
      serve(events([delta({ content: 'Hi' }), JSON.parse(minimaxError(1000, 'unknown error'))]))
      const converter = adaptor.createStream(channel, streamed)
      const relayed = await relay(await send(streamed), converter)
      t.match(relayed.out, /"error":\{"message":"unknown error","type":"upstream_error","param":null,"code":"1000"\}/)
      t.notOk(converter.finished())
      serve(events([JSON.parse(minimaxError(1002, 'rate limit'))]))
      const early = await relay(await send(streamed), adaptor.createStream(channel, streamed))
      t.equal(early.out + early.tail, '', 'nothing sent: the gateway may retry')
    })

    t.test('a base URL pasted with /v1, and the China host', async (t) => {
      t.equal(adaptor.buildRequest({ ...channel, baseUrl: 'https://api.minimaxi.com/v1' }, req).url, 'https://api.minimaxi.com/v1/text/chatcompletion_v2')
      t.equal(adaptor.listModelsRequest(channel), undefined)
      t.equal(up.seen.at(-1)?.headers.authorization, `Bearer ${KEY}`)
    })
  }
}
