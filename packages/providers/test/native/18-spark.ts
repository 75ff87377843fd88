// Type 18: iFlytek's Spark HTTP API (spark-api-open.xf-yun.com), `Authorization: Bearer <APIPassword>`.
// Spark reports most errors with HTTP 200 and `{code, message, sid}`.
import { CredentialError, upstreamRequest } from '../../src/index.js'
import { json, MODEL, parsed, readChunks, relay, relayRequest, WEATHER_TOOL, type NativeProtocol } from '../kit.js'

const USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }

const answer = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  code: 0,
  message: 'Success',
  sid: 'cha000b0bf9@dx193d200b580a571532',
  choices: [{ message: { role: 'assistant', ...message }, index: 0, ...extra }],
  usage: USAGE
})

const chunk = (delta: Record<string, unknown>, usage?: Record<string, unknown>) => ({
  code: 0,
  message: 'Success',
  sid: 'cha000b000c@dx18ff5fe58c7a571532',
  id: 'cha000b000c@dx18ff5fe58c7a571532',
  created: 1719546385,
  choices: [{ delta: { role: 'assistant', ...delta }, index: 0 }],
  ...(usage === undefined ? {} : { usage })
})

/** Spark's framing: `data:` events (no space after the colon), then `data:[DONE]`. */
const events = (items: unknown[]): string => items.map((item) => `data:${JSON.stringify(item)}\n\n`).join('') + 'data:[DONE]\n\n'

const error = (code: number, message: string) => JSON.stringify({ code, message, sid: 'cha000bf7a8@dx190' })

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 18, type: 18, key: 'spark-api-password-18', baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'spark-wrong-password',
  authorized: (seen, channel) => {
    const parts = channel.key.split('|')
    const expected = parts.length === 3 ? `${parts[2]}:${parts[1]}` : channel.key
    return seen.headers.authorization === `Bearer ${expected}`
  },
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ message: "HMAC signature cannot be verified:enforced header 'host' not used for signature creation" }))
  },
  chat: {
    path: (model) => /^x\d/.test(model) ? '/v2/chat/completions' : '/v1/chat/completions',
    answer: answer({ content: 'Hello there' }),
    stream: () => events([chunk({ content: 'Héllo, ' }), chunk({ content: 'wörld 你好 🎉' }), chunk({ content: '' }, USAGE)]),
    usage: { promptTokens: 12, completionTokens: 7 },
    tools: {
      answer: answer({ content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, { finish_reason: 'tool_calls' }),
      stream: () => events([
        chunk({ content: '', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
        chunk({ content: '', tool_calls: [{ index: 0, type: 'function', function: { arguments: '"Paris"}' } }] }, USAGE)
      ])
    },
    checkBody: (t, body) => {
      t.equal(body.model, MODEL)
      t.same(body.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }])
      t.same(body.tools, [WEATHER_TOOL])
      t.equal(body.stream, false)
    }
  },
  errors: [
    { what: '401 wrong APIPassword', status: 401, body: JSON.stringify({ message: "HMAC signature cannot be verified:enforced header 'host' not used for signature creation" }), action: 'disable' },
    { what: '200 11200 no authorization', status: 200, body: error(11200, 'AppIdNoAuthError:(12:17:04.432) tokens.total'), action: 'disable', code: '11200' },
    { what: '200 10007 busy', status: 200, body: error(10007, '用户流量受限：服务正在处理用户当前的问题，需等待处理完成后再发送新的请求。'), action: 'retry', code: '10007' },
    { what: '200 11202 per-second limit', status: 200, body: error(11202, 'AppIdQpsOverFlowError'), action: 'retry', code: '11202' },
    { what: '200 11203 concurrency limit', status: 200, body: error(11203, 'AppIdConcurrencyOverFlowError'), action: 'retry', code: '11203' },
    { what: '200 10012 engine error', status: 200, body: error(10012, 'EngineInternalError'), action: 'retry', code: '10012' },
    { what: '200 10013 refused input', status: 200, body: error(10013, '输入内容审核不通过，涉嫌违规，请重新调整输入内容'), action: 'client', code: '10013' },
    { what: '200 10907 too many tokens', status: 200, body: error(10907, 'token数量超过上限'), action: 'client', code: '10907' },
    { what: '500 gateway', status: 500, body: JSON.stringify({ message: 'An unexpected error occurred' }), action: 'retry' }
  ],
  extra: async (t, { up, channel, adaptor, serve, send }) => {
    t.test('errors in 200 answers are failures, with the status they stand for', async (t) => {
      for (const [code, action, status] of [[11200, 'disable', 403], [10007, 'retry', 429], [10013, 'client', 400]] as const) {
        serve(JSON.parse(error(code, `error ${code}`)))
        const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
        const res = await send(req)
        t.equal(res.status, 200)
        const converted = adaptor.convertResponse(channel, req, 200, 'application/json', Buffer.from(await res.arrayBuffer()))
        t.match(converted, { status, failure: { action, code: String(code), message: `error ${code}` } }, `code ${code}`)
      }
    })

    t.test('stream errors: the client hears of its own, the relay retries the others', async (t) => {
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      serve(`data:${error(10013, 'input refused')}\n\ndata:[DONE]\n\n`)
      let converter = adaptor.createStream(channel, req)
      let relayed = await relay(await send(req), converter)
      t.match(relayed.out, /"code":"10013"/)
      t.notOk(converter.finished(), 'a [DONE] after an error does not finish the stream')

      serve(`data:${error(10007, 'busy')}\n\n`)
      converter = adaptor.createStream(channel, req)
      relayed = await relay(await send(req), converter)
      t.equal(relayed.out + relayed.tail, '', 'nothing sent: the relay may retry')

      serve(events([chunk({ content: 'Once' })]).replace('data:[DONE]', `data:${error(10014, 'output refused')}\n\ndata:[DONE]`))
      converter = adaptor.createStream(channel, req)
      relayed = await relay(await send(req), converter)
      t.equal(readChunks(relayed.out.slice(0, relayed.out.indexOf('data: {"error"'))).content, 'Once')
      t.match(relayed.out, /"code":"10014"/)
      t.notOk(converter.finished())
    })

    t.test('X1 reasoning goes to /v2, streamed with its reasoning_content', async (t) => {
      serve(events([chunk({ reasoning_content: 'Hmm.' }), chunk({ content: 'Yes.' }), chunk({ content: '' }, USAGE)]))
      const req = { ...relayRequest('chat', { messages: [{ role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] }, { role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true }, max_completion_tokens: 50 }, true), model: 'x1' }
      const converter = adaptor.createStream(channel, req)
      const summary = readChunks((await relay(await send(req), converter)).out)
      t.equal(up.last().url, '/v2/chat/completions')
      const body = parsed(up.last().body)
      t.equal(body.stream_options, undefined, 'Spark reports usage anyway')
      t.equal(body.max_tokens, 50)
      t.same(body.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }])
      t.equal(summary.reasoning, 'Hmm.')
      t.equal(summary.content, 'Yes.')
      t.same(converter.usage(), { promptTokens: 12, completionTokens: 7 })
      t.equal(adaptor.buildRequest({ ...channel, other: 'v1' }, req).url, `${channel.baseUrl}/v1/chat/completions`, '`other` names the version')
      t.equal(adaptor.buildRequest({ ...channel, baseUrl: `${channel.baseUrl}/v2` }, { ...req, model: 'lite' }).url, `${channel.baseUrl}/v2/chat/completions`, 'a base URL with its version')
    })

    t.test('tool_calls written as one object are read as a list', async (t) => {
      serve(events([chunk({ content: '', tool_calls: { id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } } }, USAGE)]))
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      const summary = readChunks((await relay(await send(req), adaptor.createStream(channel, req))).out)
      t.same(summary.toolCalls, [{ id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}' }])
      t.equal(summary.finish, 'tool_calls')
    })

    t.test('keys: APIPassword, APIKey:APISecret, APPID|APISecret|APIKey', async (t) => {
      up.answer((res, seen) => { json(res, seen.headers.authorization === 'Bearer key1:secret1' ? 200 : 401, answer({ content: 'ok' })) })
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
      const triple = { ...channel, key: 'app1|secret1|key1' }
      t.equal((await send(req, triple)).status, 200, 'the websocket triple works as APIKey:APISecret')
      t.equal(up.last().headers.authorization, 'Bearer key1:secret1')
      await t.rejects(upstreamRequest(adaptor, { ...channel, key: 'app1|secret1' }, req), CredentialError, 'a broken triple is refused before any call')
    })
  }
}
