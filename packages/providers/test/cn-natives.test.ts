// Converters of the Alibaba DashScope (17), iFlytek Spark (18) and Tencent Hunyuan (23) adaptors,
// case by case (the wire behaviour is in test/native/17-alibaba.ts, 18-spark.ts, 23-tencent.ts).
import t from 'tap'
import { classifyDashScopeFailure, convertDashScopeChat, isMultimodal, readDashScopeError } from '../src/alibaba/index.js'
import { chatChunkWriter, embeddingsAnswer, openAIUsageOf } from '../src/core/openai-shapes.js'
import { classifySparkFailure, sparkBearer, sparkChatUrl, sparkVersion } from '../src/spark/index.js'
import { CredentialError, type ChannelConfig } from '../src/index.js'
import { classifyTencentFailure, hunyuanCredentials, signHunyuan, tc3Sign } from '../src/tencent/index.js'
import { sparkChatBody } from '../src/spark/request.js'
import { hunyuanChatBody } from '../src/tencent/request.js'
import { createDashScopeChatStream } from '../src/alibaba/stream.js'
import { readChunks, relayRequest } from './kit.js'

const channel = (type: number, key: string, other = ''): ChannelConfig => ({ id: type, type, key, baseUrl: '', other, organization: null, setting: {} })

t.test('the chunk writer: role first, tool calls numbered by key, one finish', async (t) => {
  const out = chatChunkWriter('m')
  out.head('chatcmpl-x', 'm')
  t.notOk(out.started())
  out.content('')
  t.notOk(out.started(), 'empty text writes nothing')
  out.toolCall('a', { name: 'f', arguments: '{"x":' })
  out.toolCall('b', { id: 'call_b', name: 'g' })
  out.toolCall('a', { arguments: '1}' })
  out.finish('tool_calls', openAIUsageOf({ promptTokens: 3, completionTokens: 2 }))
  out.content('late')
  out.finish('stop', undefined)
  const summary = readChunks(out.flush().toString())
  t.ok(summary.roleFirst)
  t.same(summary.toolCalls, [{ id: 'call_1', name: 'f', arguments: '{"x":1}' }, { id: 'call_b', name: 'g', arguments: '' }])
  t.equal(summary.finish, 'tool_calls')
  t.same(summary.usage, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 })
  t.ok(summary.done)
  t.equal(out.text.take(), '{"x":1}')
})

t.test('usage and embeddings shapes', async (t) => {
  t.same(openAIUsageOf({ promptTokens: 10, completionTokens: 5, cachedTokens: 0 }, 3), {
    prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 3 }
  })
  const answer = JSON.parse(embeddingsAnswer([[1.5, -2]], 'e', undefined, 'base64')) as { data: Array<{ embedding: string }>, usage?: unknown }
  const bytes = Buffer.from(answer.data[0]?.embedding ?? '', 'base64')
  t.same([bytes.readFloatLE(0), bytes.readFloatLE(4)], [1.5, -2])
  t.equal(answer.usage, undefined, 'no usage invented')
})

t.test('DashScope: endpoints, legacy text answers, errors in 2xx bodies, counts after the finish', async (t) => {
  for (const model of ['qwen-vl-max', 'qwen3-vl-plus', 'qvq-max', 'qwen-omni-turbo', 'qwen2.5-vl-72b-instruct']) t.ok(isMultimodal({ ...relayRequest('chat', {}), model }), model)
  for (const model of ['qwen-plus', 'qwen3-max', 'qwen-flash', 'qwq-plus']) t.notOk(isMultimodal({ ...relayRequest('chat', { messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] }), model }), model)

  const req = relayRequest('chat', { messages: [] })
  const legacy = convertDashScopeChat(req, 200, 'application/json', Buffer.from(JSON.stringify({ output: { text: 'Hi', finish_reason: 'length' }, usage: { input_tokens: 2, output_tokens: 1 } })))
  t.match(JSON.parse(String(legacy.body)), { choices: [{ message: { content: 'Hi' }, finish_reason: 'length' }] })
  t.same(legacy.usage, { promptTokens: 2, completionTokens: 1 })

  const error = convertDashScopeChat(req, 200, 'application/json', Buffer.from(JSON.stringify({ code: 'Throttling.RateQuota', message: 'slow down', request_id: 'r' })))
  t.match(error, { status: 429, failure: { action: 'retry', code: 'Throttling.RateQuota', message: 'slow down' } })
  t.same(readDashScopeError('id:1\r\nevent:error\r\n:HTTP_STATUS/401\r\ndata:{"code":"InvalidApiKey","message":"bad"}\r\n\r\n'), { code: 'InvalidApiKey', message: 'bad' })
  t.match(classifyDashScopeFailure(400, JSON.stringify({ code: 'AllocationQuota.FreeTierOnly', message: 'free tier used up' })), { action: 'disable' })
  t.match(classifyDashScopeFailure(503, 'upstream connect error'), { action: 'retry' })

  const stream = createDashScopeChatStream(relayRequest('chat', {}, true))
  const event = (finish: string, output: number) => `event:result\ndata:${JSON.stringify({ output: { choices: [{ message: { role: 'assistant', content: 'x' }, finish_reason: finish }] }, usage: { input_tokens: 5, output_tokens: output } })}\n\n`
  stream.push(Buffer.from(event('stop', 2)))
  t.ok(stream.finished())
  stream.push(Buffer.from(event('stop', 4)))
  t.same(stream.usage(), { promptTokens: 5, completionTokens: 4 }, 'later running counts still bill')
})

t.test('Spark: versions, keys, unknown codes', async (t) => {
  t.equal(sparkVersion(channel(18, 'k'), 'https://h', 'x1'), 'v2')
  t.equal(sparkVersion(channel(18, 'k', '/v2/'), 'https://h', 'lite'), 'v2')
  t.equal(sparkChatUrl(channel(18, 'k'), 'https://h/v1', '4.0Ultra'), 'https://h/v1/chat/completions')
  t.equal(sparkBearer(' AK:SK '), 'AK:SK')
  t.equal(sparkChatBody({ ...relayRequest('chat', { messages: [] }), model: 'SparkDesk-v3.5' }).model, 'generalv3.5', 'one-api\'s model names')
  t.throws(() => sparkBearer('a||c'), CredentialError)
  t.throws(() => sparkBearer(''), CredentialError)
  t.match(classifySparkFailure(200, JSON.stringify({ code: 19999, message: 'new' })), { action: 'retry', code: '19999' })
  t.match(classifySparkFailure(403, JSON.stringify({ code: '19999', message: 'new' })), { action: 'disable', code: '19999' })
  t.match(classifySparkFailure(200, JSON.stringify({ code: '10014', message: 'output refused' })), { action: 'client', code: '10014' })
})

t.test('Tencent: keys, the signature date in UTC, signing replaces an earlier one, tool choice', async (t) => {
  t.same(hunyuanCredentials('id|key'), { secretId: 'id', secretKey: 'key' })
  t.same(hunyuanCredentials(' 125|id|key '), { secretId: 'id', secretKey: 'key' })
  for (const bad of ['id', 'id|', '1|2|3|4', '']) t.throws(() => hunyuanCredentials(bad), CredentialError, JSON.stringify(bad))

  const at = (timestamp: number) => tc3Sign({ secretId: 'i', secretKey: 'k', service: 'hunyuan', host: 'h', contentType: 'application/json', timestamp, method: 'POST', query: '', payload: '{}' })
  t.match(at(1551139199).authorization, /\/2019-02-25\/hunyuan\//, 'the last second of a UTC day')
  t.match(at(1551139200).authorization, /\/2019-02-26\/hunyuan\//, 'the first of the next')

  const up = { method: 'POST' as const, url: 'https://hunyuan.tencentcloudapi.com/', headers: { 'Content-Type': 'application/json', authorization: 'stale', 'X-TC-Action': 'ChatCompletions' }, body: '{"a":1}' }
  const signed = signHunyuan(channel(23, 'id|key'), up, 1551113065_000)
  t.same(Object.keys(signed.headers).filter((h) => h.toLowerCase() === 'authorization'), ['Authorization'], 'one Authorization header')
  t.equal(signed.headers['X-TC-Timestamp'], '1551113065')
  t.equal(signed.headers.Authorization, tc3Sign({ secretId: 'id', secretKey: 'key', service: 'hunyuan', host: 'hunyuan.tencentcloudapi.com', contentType: 'application/json', timestamp: 1551113065, method: 'POST', query: '', payload: '{"a":1}' }).authorization)

  const tools = [{ type: 'function', function: { name: 'only', parameters: { type: 'object' } } }]
  t.match(hunyuanChatBody(relayRequest('chat', { messages: [], tools, tool_choice: 'required' })), { ToolChoice: 'custom', CustomTool: { Function: { Name: 'only' } } })
  t.match(hunyuanChatBody(relayRequest('chat', { messages: [], tools, tool_choice: 'none' })), { ToolChoice: 'none' })
  t.match(hunyuanChatBody(relayRequest('chat', { messages: [], tools: [...tools, ...tools], tool_choice: 'required' })), { ToolChoice: 'auto' })
  t.match(classifyTencentFailure(200, JSON.stringify({ Response: { Error: { Code: 'UnsupportedOperation', Message: 'no' } } })), { action: 'client' })
  t.match(classifyTencentFailure(200, JSON.stringify({ Response: { Error: { Code: 'ResourceInsufficient.ChargeResourceExhaust', Message: 'no money' } } })), { action: 'disable' })
})
