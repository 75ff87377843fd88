// Type 23: Tencent Hunyuan through Tencent Cloud API 3.0 (hunyuan.tencentcloudapi.com), TC3-HMAC-SHA256
// signed from the key `SecretId|SecretKey`. Tencent answers errors with HTTP 200 and `Response.Error`.
import { createHash, createHmac } from 'node:crypto'
import { CredentialError, upstreamRequest, type ChannelConfig } from '../../src/index.js'
import { tc3Sign } from '../../src/tencent/index.js'
import { MODEL, parsed, readChunks, relay, relayRequest, type NativeProtocol, type Seen } from '../kit.js'

const SECRET_ID = 'AKIDhunyuantest23'
const SECRET_KEY = 'hunyuan-secret-23'

const USAGE = { PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19 }

/** Checks a request's TC3 signature as Tencent does, computed here from scratch (not with the adaptor's code). */
function verifySignature (seen: Seen, secretId: string, secretKey: string): boolean {
  const header = seen.headers.authorization ?? ''
  const match = /^TC3-HMAC-SHA256 Credential=([^/]+)\/(\d{4}-\d{2}-\d{2})\/hunyuan\/tc3_request, SignedHeaders=content-type;host, Signature=([0-9a-f]{64})$/.exec(header)
  const timestamp = Number(seen.headers['x-tc-timestamp'])
  if (match === null || match[1] !== secretId || !Number.isInteger(timestamp)) return false
  if (Math.abs(Date.now() / 1000 - timestamp) > 300) return false
  const date = new Date(timestamp * 1000).toISOString().slice(0, 10)
  if (match[2] !== date) return false
  const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex')
  const canonical = `POST\n/\n\ncontent-type:${String(seen.headers['content-type'])}\nhost:${String(seen.headers.host)}\n\ncontent-type;host\n${sha(seen.body)}`
  const toSign = `TC3-HMAC-SHA256\n${timestamp}\n${date}/hunyuan/tc3_request\n${sha(canonical)}`
  let key: Buffer = createHmac('sha256', `TC3${secretKey}`).update(date).digest()
  key = createHmac('sha256', key).update('hunyuan').digest()
  key = createHmac('sha256', key).update('tc3_request').digest()
  return createHmac('sha256', key).update(toSign).digest('hex') === match[3]
}

const wrapped = (response: Record<string, unknown>) => ({ Response: { ...response, RequestId: 'e7f5ce41-87fd-4977-803c-54cded687cd9' } })

const error = (code: string, message: string) => JSON.stringify(wrapped({ Error: { Code: code, Message: message } }))

const completion = (message: Record<string, unknown>, finish: string) => wrapped({
  Note: '以上内容为AI生成，不代表开发者立场，请勿删除或修改本标记',
  Choices: [{ Message: { Role: 'assistant', ...message }, FinishReason: finish, Index: 0 }],
  Created: 1719638614,
  Id: 'hy-1',
  Usage: USAGE
})

const chunk = (delta: Record<string, unknown>, finish: string, usage: Record<string, unknown>) => ({
  Note: '以上内容为AI生成，不代表开发者立场，请勿删除或修改本标记',
  Choices: [{ FinishReason: finish, Delta: { Role: 'assistant', ...delta } }],
  Created: 1719816830,
  Id: 'hy-2',
  Usage: usage
})

const events = (items: unknown[]): string => items.map((item) => `data: ${JSON.stringify(item)}\n\n`).join('')

const running = { PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15 }

const channelOf = (origin: string): ChannelConfig => ({ id: 23, type: 23, key: `${SECRET_ID}|${SECRET_KEY}`, baseUrl: origin, other: 'ap-guangzhou', organization: null, setting: {} })

export const fixture: NativeProtocol = {
  channel: channelOf,
  wrongKey: `${SECRET_ID}|not-the-secret`,
  authorized: (seen) =>
    verifySignature(seen, SECRET_ID, SECRET_KEY) && seen.headers['x-tc-version'] === '2023-09-01' && seen.headers['x-tc-region'] === 'ap-guangzhou' &&
    (seen.headers['x-tc-action'] === 'ChatCompletions' || seen.headers['x-tc-action'] === 'GetEmbedding'),
  refuse: (res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(error('AuthFailure.SignatureFailure', 'The provided credentials could not be validated. Please check your signature is correct.'))
  },
  chat: {
    path: () => '/',
    answer: completion({ Content: 'Hello there' }, 'stop'),
    stream: () => events([chunk({ Content: 'Héllo, ' }, '', running), chunk({ Content: 'wörld 你好 🎉' }, '', USAGE), chunk({ Content: '' }, 'stop', USAGE)]),
    usage: { promptTokens: 12, completionTokens: 7 },
    tools: {
      answer: completion({ Content: '', ToolCalls: [{ Id: 'call_1', Type: 'function', Function: { Name: 'get_weather', Arguments: '{"city":"Paris"}' } }] }, 'tool_calls'),
      // As Hunyuan streams a call: every piece repeats its Id, the name comes once.
      stream: () => events([
        chunk({ Content: '', ToolCalls: [{ Id: 'call_1', Type: 'function', Function: { Name: 'get_weather', Arguments: '' } }] }, '', running),
        chunk({ Content: '', ToolCalls: [{ Id: 'call_1', Type: 'function', Function: { Name: '', Arguments: '{"city":"Paris"}' } }] }, '', running),
        chunk({ Content: '' }, 'tool_calls', USAGE)
      ])
    },
    checkBody: (t, body, seen) => {
      t.equal(body.Model, MODEL)
      t.same(body.Messages, [{ Role: 'system', Content: 'Be brief.' }, { Role: 'user', Content: 'Weather in Paris?' }])
      t.same(body.Tools, [{ Type: 'function', Function: { Name: 'get_weather', Parameters: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}', Description: 'Current weather' } }], 'the schema as a JSON string')
      t.equal(body.Stream, false)
      t.equal(body.model, undefined)
      t.equal(seen.headers['x-tc-action'], 'ChatCompletions')
    }
  },
  endpoints: ['embeddings'],
  errors: [
    { what: 'signature', status: 200, body: error('AuthFailure.SignatureFailure', 'The provided credentials could not be validated.'), action: 'disable', code: 'AuthFailure.SignatureFailure' },
    { what: 'unknown SecretId', status: 200, body: error('AuthFailure.SecretIdNotFound', 'The SecretId is not found.'), action: 'disable', code: 'AuthFailure.SecretIdNotFound' },
    { what: 'arrears', status: 200, body: error('FailedOperation.ServiceStopArrears', '欠费停服。'), action: 'disable', code: 'FailedOperation.ServiceStopArrears' },
    { what: 'resource pack used up', status: 200, body: error('FailedOperation.ResourcePackExhausted', '资源包余量已用尽，请购买资源包或开通后付费。'), action: 'disable', code: 'FailedOperation.ResourcePackExhausted' },
    { what: 'not activated', status: 200, body: error('FailedOperation.ServiceNotActivated', '服务未开通，请前往控制台申请试用。'), action: 'disable', code: 'FailedOperation.ServiceNotActivated' },
    { what: 'rate limit', status: 200, body: error('RequestLimitExceeded', 'Your current request is too frequent.'), action: 'retry', code: 'RequestLimitExceeded' },
    { what: 'quota', status: 200, body: error('LimitExceeded', '超过配额限制。'), action: 'retry', code: 'LimitExceeded' },
    { what: 'engine timeout', status: 200, body: error('FailedOperation.EngineRequestTimeout', '引擎层请求超时；请稍后重试。'), action: 'retry', code: 'FailedOperation.EngineRequestTimeout' },
    { what: 'internal', status: 200, body: error('InternalError', '内部错误。'), action: 'retry', code: 'InternalError' },
    { what: 'bad parameter', status: 200, body: error('InvalidParameter', 'Temperature must be 2 or less'), action: 'client', code: 'InvalidParameter' },
    { what: 'unknown model', status: 200, body: error('InvalidParameterValue.Model', '模型不存在。'), action: 'client', code: 'InvalidParameterValue.Model' },
    { what: '502 gateway', status: 502, body: '<html>Bad Gateway</html>', action: 'retry' }
  ],
  extra: async (t, { up, channel, adaptor, serve, send }) => {
    t.test('TC3 matches Tencent\'s published worked example', async (t) => {
      // The API 3.0 signature documentation's example (CVM DescribeInstances).
      const signed = tc3Sign({
        secretId: 'AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE',
        secretKey: 'Gu5t9xGARNpq86cd98joQYCN3EXAMPLE',
        service: 'cvm',
        host: 'cvm.tencentcloudapi.com',
        contentType: 'application/json; charset=utf-8',
        timestamp: 1551113065,
        method: 'POST',
        query: '',
        payload: '{"Limit": 1, "Filters": [{"Values": ["\\u672a\\u547d\\u540d"], "Name": "instance-name"}]}'
      })
      t.equal(signed.hashedPayload, '35e9c5b0e3ae67532d3c9f17ead6c90222632e5b1ff7f6e89887f1398934f064')
      t.equal(signed.hashedCanonicalRequest, '5ffe6a04c0664d6b969fab9a13bdab201d63ee709638e2749d62a09ca18d7031')
      t.equal(signed.signature, '72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168')
      t.equal(signed.authorization, 'TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE/2019-02-25/cvm/tc3_request, SignedHeaders=content-type;host, Signature=72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168')
    })

    t.test('the signature covers the final body and the AppId form of the key', async (t) => {
      serve(completion({ Content: 'ok' }, 'stop'))
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], EnableEnhancement: false })
      const over = { ...channel, key: `1250000000|${SECRET_ID}|${SECRET_KEY}`, paramOverride: { Temperature: 0.3 } }
      const res = await send(req, over)
      t.equal(res.status, 200)
      t.notOk((await res.clone().text()).includes('Error'), 'accepted')
      const body = parsed(up.last().body)
      t.equal(body.Temperature, 0.3, 'the override was signed')
      t.equal(body.EnableEnhancement, false, 'Hunyuan\'s own fields pass through')
      await t.rejects(upstreamRequest(adaptor, { ...channel, key: SECRET_ID }, req), CredentialError, 'a key without its secret is refused before any call')
    })

    t.test('a stream refused before it starts is a JSON failure; errors mid-stream are error chunks', async (t) => {
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      serve(JSON.parse(error('LimitExceeded', '超过配额限制。')))
      const res = await send(req)
      t.match(res.headers.get('content-type'), /json/)
      const converted = adaptor.convertResponse(channel, req, res.status, 'application/json', Buffer.from(await res.arrayBuffer()))
      t.match(converted, { status: 429, failure: { action: 'retry', code: 'LimitExceeded' } })

      serve(events([chunk({ Content: 'Once' }, '', running), { ...chunk({ Content: '' }, '', running), ErrorMsg: { Code: 4001, Msg: '请求模型超时' } }]))
      const converter = adaptor.createStream(channel, req)
      const relayed = await relay(await send(req), converter)
      t.equal(readChunks(relayed.out.slice(0, relayed.out.indexOf('data: {"error"'))).content, 'Once')
      t.match(relayed.out, /"code":"4001"/)
      t.notOk(converter.finished())
    })

    t.test('moderation, reasoning, images and tool choice', async (t) => {
      serve(events([chunk({ ReasoningContent: 'Hmm.' }, '', running), chunk({ Content: 'Part' }, 'sensitive', USAGE)]))
      const req = {
        ...relayRequest('chat', {
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'What is it?' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
            { role: 'assistant', content: null, tool_calls: [{ id: 'call_7', type: 'function', function: { name: 'look', arguments: '{}' } }] },
            { role: 'tool', tool_call_id: 'call_7', content: 'a cat' }
          ],
          stream: true,
          stop: 'END',
          tools: [{ type: 'function', function: { name: 'look', parameters: { type: 'object' } } }],
          tool_choice: { type: 'function', function: { name: 'look' } }
        }, true),
        model: 'hunyuan-t1-latest'
      }
      const summary = readChunks((await relay(await send(req), adaptor.createStream(channel, req))).out)
      t.equal(summary.reasoning, 'Hmm.')
      t.equal(summary.content, 'Part')
      t.equal(summary.finish, 'content_filter')
      const body = parsed(up.last().body)
      t.same(body.Messages, [
        { Role: 'user', Contents: [{ Type: 'text', Text: 'What is it?' }, { Type: 'image_url', ImageUrl: { Url: 'https://example.com/a.png' } }] },
        { Role: 'assistant', Content: '', ToolCalls: [{ Id: 'call_7', Type: 'function', Function: { Name: 'look', Arguments: '{}' } }] },
        { Role: 'tool', Content: 'a cat', ToolCallId: 'call_7' }
      ])
      t.same(body.Stop, ['END'])
      t.same(body.ToolChoice, 'custom')
      t.same(body.CustomTool, { Type: 'function', Function: { Name: 'look', Parameters: '{"type":"object"}' } })
    })

    t.test('embeddings through GetEmbedding', async (t) => {
      serve(wrapped({ Data: [{ Embedding: [0.5, -1], Index: 0, Object: 'embedding' }, { Embedding: [1, 2], Index: 1, Object: 'embedding' }], Usage: { PromptTokens: 5, TotalTokens: 5 } }))
      const req = { ...relayRequest('embeddings', { input: ['a', 'b'] }), model: 'hunyuan-embedding' }
      const res = await send(req)
      t.equal(up.last().headers['x-tc-action'], 'GetEmbedding')
      t.same(parsed(up.last().body), { InputList: ['a', 'b'] })
      const converted = adaptor.convertResponse(channel, req, res.status, 'application/json', Buffer.from(await res.arrayBuffer()))
      t.same(parsed(Buffer.from(converted.body)), {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [0.5, -1] }, { object: 'embedding', index: 1, embedding: [1, 2] }],
        model: 'hunyuan-embedding',
        usage: { prompt_tokens: 5, total_tokens: 5 }
      })
      t.same(converted.usage, { promptTokens: 5, completionTokens: 0 })
      t.same(JSON.parse(String(adaptor.buildRequest(channel, { ...req, body: { input: 'one' } }).body)), { Input: 'one' })
    })
  }
}
