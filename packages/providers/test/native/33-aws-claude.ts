// Type 33: Claude on Amazon Bedrock (bedrock-runtime InvokeModel / InvokeModelWithResponseStream),
// SigV4-signed; streams in AWS event stream framing. The server recomputes every signature by hand.
import type { ServerResponse } from 'node:http'
import { CredentialError, type ChannelConfig, type RelayRequest } from '../../src/index.js'
import { MODEL, readChunks, relay, relayRequest, type NativeProtocol, type Seen } from '../kit.js'
import { anthropicError, anthropicMessage, anthropicStream } from './anthropic-wire.js'
import { bedrockError, bedrockStream, chunkMessage, exceptionMessage, refuseSignature, sigV4Problem, sseEvents, type AwsSecret } from './bedrock-wire.js'

const ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE'
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
const REGION = 'us-west-2'

/** The secret a channel's key holds, as the server knows it. */
function secretOf (channel: ChannelConfig): AwsSecret {
  const [accessKeyId = '', secretAccessKey = '', region = '', sessionToken = ''] = channel.key.split('|')
  return { accessKeyId, secretAccessKey, region: region || channel.other, ...(sessionToken === '' ? {} : { sessionToken }) }
}

/** Bedrock's ids of the models the generic tests ask for (the first default model, MODEL itself). */
const BEDROCK_IDS: Record<string, string> = { 'claude-opus-4-6': 'us.anthropic.claude-opus-4-6-v1' }
const invokePath = (id: string, stream: boolean) => `/model/${encodeURIComponent(id)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`

const hello = () => anthropicStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Héllo, ' }, { type: 'text_delta', text: 'wörld 你好 🎉' }] }], 'end_turn')

const bodyOf = (seen: Seen) => JSON.parse(seen.body.toString()) as Record<string, unknown>

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 33, type: 33, key: `${ACCESS_KEY_ID}|${SECRET}|${REGION}`, baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: `${ACCESS_KEY_ID}|wJalrXUtnFEMI/K7MDENG+bPxRfiCYWRONGKEY|${REGION}`,
  authorized: (seen, channel) => sigV4Problem(seen, secretOf(channel)) === undefined && seen.headers['x-api-key'] === undefined,
  refuse: refuseSignature,
  chat: {
    path: (model, stream) => invokePath(BEDROCK_IDS[model] ?? model, stream),
    answer: anthropicMessage([{ type: 'text', text: 'Hello there' }], 'end_turn'),
    stream: () => bedrockStream(sseEvents(hello())),
    streamContentType: 'application/vnd.amazon.eventstream',
    binaryStream: true,
    tools: {
      answer: anthropicMessage([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }], 'tool_use'),
      stream: () => bedrockStream(sseEvents(anthropicStream([{
        start: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} },
        deltas: [{ type: 'input_json_delta', partial_json: '' }, { type: 'input_json_delta', partial_json: '{"city": ' }, { type: 'input_json_delta', partial_json: '"Paris"}' }]
      }], 'tool_use')))
    },
    checkBody: (t, body) => {
      t.equal(body.anthropic_version, 'bedrock-2023-05-31')
      t.equal(body.model, undefined, 'the model is in the URL')
      t.equal(body.stream, undefined, 'Bedrock refuses a stream field')
      t.same(body.system, [{ type: 'text', text: 'Be brief.' }], 'system prompt')
      t.same(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }], 'messages')
      t.same(body.tools, [{ name: 'get_weather', description: 'Current weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }], 'tools')
      t.equal(body.max_tokens, 4096)
    }
  },
  models: {
    path: '/foundation-models?byProvider=anthropic&byOutputModality=TEXT',
    answer: {
      modelSummaries: [
        { modelArn: 'arn:aws:bedrock:us-west-2::foundation-model/model-a', modelId: 'model-a', modelName: 'Model A', providerName: 'Anthropic', outputModalities: ['TEXT'], responseStreamingSupported: true, inferenceTypesSupported: ['ON_DEMAND'], modelLifecycle: { status: 'ACTIVE' } },
        { modelArn: 'arn:aws:bedrock:us-west-2::foundation-model/model-a:200k', modelId: 'model-a:200k', modelName: 'Model A', providerName: 'Anthropic', outputModalities: ['TEXT'], inferenceTypesSupported: ['PROVISIONED'], modelLifecycle: { status: 'ACTIVE' } },
        { modelArn: 'arn:aws:bedrock:us-west-2::foundation-model/model-b', modelId: 'model-b', modelName: 'Model B', providerName: 'Anthropic', outputModalities: ['TEXT'], inferenceTypesSupported: ['INFERENCE_PROFILE'], modelLifecycle: { status: 'ACTIVE' } }
      ]
    }
  },
  defaultUrls: (_channel, model) => ({
    chat: `https://bedrock-runtime.${REGION}.amazonaws.com${invokePath(model, false)}`,
    models: `https://bedrock.${REGION}.amazonaws.com/foundation-models?byProvider=anthropic&byOutputModality=TEXT`
  }),
  errors: [
    { what: '403 bad signature', status: 403, body: JSON.stringify({ message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.' }), action: 'disable', code: 'InvalidSignatureException' },
    { what: '403 unknown access key', status: 403, body: JSON.stringify({ message: 'The security token included in the request is invalid.' }), action: 'disable', code: 'UnrecognizedClientException' },
    { what: '403 expired session token', status: 403, body: JSON.stringify({ Message: 'The security token included in the request is expired' }), action: 'disable', code: 'ExpiredTokenException' },
    { what: '403 no model access', status: 403, body: JSON.stringify({ message: 'You don\'t have access to the model with the specified model ID.' }), action: 'disable', code: 'AccessDeniedException' },
    { what: '429 throttled', status: 429, body: JSON.stringify({ message: 'Too many requests, please wait before trying again.' }), action: 'retry', code: 'ThrottlingException' },
    { what: '429 model not ready', status: 429, body: JSON.stringify({ message: 'Model is not ready for inference. Wait and try your request again.' }), action: 'retry', code: 'ModelNotReadyException' },
    { what: '400 daily quota', status: 400, body: JSON.stringify({ message: 'Too many tokens per day, your request exceeds the service quota for your account.' }), action: 'retry', code: 'ServiceQuotaExceededException' },
    { what: '408 model timeout', status: 408, body: JSON.stringify({ message: 'Model has timed out in processing the request.' }), action: 'retry', code: 'ModelTimeoutException' },
    { what: '500 internal', status: 500, body: JSON.stringify({ message: 'Internal server error' }), action: 'retry', code: 'InternalServerException' },
    { what: '503 unavailable', status: 503, body: JSON.stringify({ message: 'Bedrock is unable to process your request.' }), action: 'retry', code: 'ServiceUnavailableException' },
    { what: '400 validation', status: 400, body: JSON.stringify({ message: 'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row' }), action: 'client', code: 'ValidationException' },
    { what: '400 on-demand not offered', status: 400, body: JSON.stringify({ message: 'Invocation of model ID anthropic.claude-sonnet-4-5-20250929-v1:0 with on-demand throughput isn\'t supported. Retry your request with the ID or ARN of an inference profile that contains this model.' }), action: 'client', code: 'ValidationException' },
    { what: '404 unknown model', status: 404, body: JSON.stringify({ message: 'The provided model identifier is invalid.' }), action: 'client', code: 'ResourceNotFoundException' },
    { what: 'typed body', status: 400, body: JSON.stringify({ __type: 'com.amazon.coral.validate#ValidationException', message: 'Malformed input request: #: extraneous key [stream] is not permitted' }), action: 'client', code: 'ValidationException' }
  ],
  extra: async (t, { up, channel, adaptor, send }) => {
    /** Answers when the request is signed with `secretOf(expected)`, as Bedrock would. */
    const serveSigned = (expected: ChannelConfig, answer: (res: ServerResponse, seen: Seen) => void | Promise<void>) => up.answer(async (res, seen) => {
      const problem = sigV4Problem(seen, secretOf(expected))
      if (problem !== undefined) {
        bedrockError(res, 403, 'InvalidSignatureException', `signature refused: ${problem}`)
        return
      }
      await answer(res, seen)
    })
    const answerJson = (res: ServerResponse) => { res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(anthropicMessage([{ type: 'text', text: 'Hello there' }], 'end_turn'))) }
    const answerStream = (bytes: Buffer) => (res: ServerResponse) => { res.writeHead(200, { 'Content-Type': 'application/vnd.amazon.eventstream' }).end(bytes) }
    const chat = (model: string, stream = false, extra: Record<string, unknown> = {}): RelayRequest =>
      ({ ...relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}), ...extra }, stream), model })

    t.test('Anthropic model ids become Bedrock ids with the region\'s inference profile, escaped and signed', async (t) => {
      serveSigned(channel, answerJson)
      const cases: Array<[string, string]> = [
        ['claude-sonnet-4-5-20250929', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'],
        ['claude-sonnet-4-5', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'],
        ['claude-opus-4-1', 'us.anthropic.claude-opus-4-1-20250805-v1:0'],
        ['global.anthropic.claude-haiku-4-5-20251001-v1:0', 'global.anthropic.claude-haiku-4-5-20251001-v1:0'],
        ['anthropic.claude-3-haiku-20240307-v1:0', 'anthropic.claude-3-haiku-20240307-v1:0'],
        ['claude-3-haiku-20240307', 'anthropic.claude-3-haiku-20240307-v1:0'],
        ['arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/abc123', 'arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/abc123']
      ]
      for (const [model, id] of cases) {
        const res = await send(chat(model))
        t.equal(res.status, 200, `${model}: signed over the escaped path`)
        t.equal(up.last().url, invokePath(id, false), model)
      }
      t.equal(up.last().url, '/model/arn%3Aaws%3Abedrock%3Aus-west-2%3A123456789012%3Aapplication-inference-profile%2Fabc123/invoke')
      const eu = { ...channel, key: `${ACCESS_KEY_ID}|${SECRET}`, other: 'eu-central-1' }
      serveSigned(eu, answerJson)
      t.equal((await send(chat('claude-sonnet-4-5'), eu)).status, 200, 'the region of other: scope eu-central-1')
      t.equal(up.last().url, invokePath('eu.anthropic.claude-sonnet-4-5-20250929-v1:0', false))
      t.match(up.last().headers.authorization, /Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/eu-central-1\/bedrock\/aws4_request/)
      const tokyo = { ...channel, key: `${ACCESS_KEY_ID}|${SECRET}|ap-northeast-1` }
      t.match(adaptor.buildRequest(tokyo, chat('claude-sonnet-4-5')).url, /\/model\/jp\.anthropic\.claude-sonnet-4-5/)
      t.match(adaptor.buildRequest(tokyo, chat('claude-opus-4-5')).url, /\/model\/global\.anthropic\.claude-opus-4-5/, 'no jp profile: the global one')
      t.match(adaptor.buildRequest({ ...tokyo, baseUrl: '' }, chat('claude-opus-4-1')).url, /^https:\/\/bedrock-runtime\.ap-northeast-1\.amazonaws\.com\/model\/anthropic\.claude-opus-4-1-20250805-v1%3A0\/invoke$/)
    })

    t.test('signs the final body and headers (overrides included), with a session token when the key has one', async (t) => {
      const overridden = { ...channel, paramOverride: { top_k: 5 }, headerOverride: { 'X-Amzn-Bedrock-Trace': 'ENABLED' } }
      serveSigned(overridden, answerJson)
      t.equal((await send(chat(MODEL), overridden)).status, 200)
      t.equal(bodyOf(up.last()).top_k, 5, 'the overridden body was signed')
      t.match(up.last().headers.authorization, /SignedHeaders=[^,]*x-amzn-bedrock-trace/)
      const temporary = { ...channel, key: `ASIAIOSFODNN7EXAMPLE|${SECRET}|${REGION}|FwoGZXIvYXdzEJr//////////wEaDEXAMPLETOKEN` }
      serveSigned(temporary, answerJson)
      t.equal((await send(chat(MODEL), temporary)).status, 200)
      t.equal(up.last().headers['x-amz-security-token'], 'FwoGZXIvYXdzEJr//////////wEaDEXAMPLETOKEN')
      t.match(up.last().headers.authorization, /SignedHeaders=[^,]*x-amz-security-token/)
      // The same keys without the token: the server expects one.
      serveSigned(temporary, answerJson)
      const untokened = await send(chat(MODEL), { ...temporary, key: `ASIAIOSFODNN7EXAMPLE|${SECRET}|${REGION}` })
      t.equal(untokened.status, 403)
      t.equal(adaptor.classifyFailure(untokened.status, await untokened.text()).action, 'disable')
    })

    t.test('a malformed key is refused before any call and disables the channel', async (t) => {
      const before = up.seen.length
      for (const key of ['just-a-key', `${ACCESS_KEY_ID}|${SECRET}`, `${ACCESS_KEY_ID}|${SECRET}|not a region`, `${ACCESS_KEY_ID}||${REGION}`, 'a|b|us-east-1|d|e', `${ACCESS_KEY_ID}|${SECRET}|us-east-1.evil.example`]) {
        const err = await send(chat(MODEL), { ...channel, key }).then(() => undefined, (e: unknown) => e)
        t.type(err, CredentialError, key)
        t.equal((err as CredentialError).action, 'disable')
        t.notMatch((err as Error).message, SECRET)
      }
      t.equal(up.seen.length, before, 'nothing was sent')
    })

    t.test('Anthropic clients pass through: the body as written (betas in the body) and the stream as server-sent events', async (t) => {
      const body = { model: 'client-alias', max_tokens: 64, stream: true, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: 'u1' } }
      const req: RelayRequest = { endpoint: 'messages', format: 'anthropic', model: 'claude-sonnet-4-5', stream: true, body, headers: { 'anthropic-beta': 'context-1m-2025-08-07, interleaved-thinking-2025-05-14', 'anthropic-version': '2023-06-01' } }
      const cached = sseEvents(hello()).map((event) => event.type === 'message_start'
        ? { ...event, message: { ...(event.message as object), usage: { input_tokens: 8, cache_creation_input_tokens: 30, cache_read_input_tokens: 4, output_tokens: 1 } } }
        : event)
      serveSigned(channel, answerStream(bedrockStream(cached)))
      const converter = adaptor.createStream(channel, req)
      const relayed = await relay(await send(req), converter)
      const seen = up.last()
      t.equal(seen.url, invokePath('us.anthropic.claude-sonnet-4-5-20250929-v1:0', true))
      t.same(bodyOf(seen), { anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: 'u1' }, anthropic_beta: ['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14'] })
      t.equal(seen.headers['anthropic-beta'], undefined, 'betas go in the body on Bedrock')
      const events = (relayed.out + relayed.tail).split('\n\n').filter((e) => e !== '')
      t.same(events.map((e) => e.split('\n')[0]), ['event: message_start', 'event: content_block_start', 'event: content_block_delta', 'event: content_block_delta', 'event: content_block_stop', 'event: message_delta', 'event: message_stop'])
      const texts = events.map((e) => JSON.parse(e.split('\n')[1]!.slice('data: '.length)) as { delta?: { text?: string } }).map((e) => e.delta?.text ?? '').join('')
      t.equal(texts, 'Héllo, wörld 你好 🎉')
      t.ok(converter.finished())
      t.same(converter.usage(), { promptTokens: 42, completionTokens: 7, cachedTokens: 4, cacheWriteTokens: 30 }, 'cache reads and writes are prompt tokens')
      t.equal(relayed.text, 'Héllo, wörld 你好 🎉')

      serveSigned(channel, answerJson)
      const plain: RelayRequest = { ...req, stream: false, body: { ...body, stream: false } }
      const converted = adaptor.convertResponse(channel, plain, 200, 'application/json', Buffer.from(await (await send(plain)).arrayBuffer()))
      t.equal(up.last().url, invokePath('us.anthropic.claude-sonnet-4-5-20250929-v1:0', false))
      t.equal(bodyOf(up.last()).stream, undefined)
      t.match(JSON.parse(String(converted.body)), { type: 'message', content: [{ type: 'text', text: 'Hello there' }] }, 'Anthropic\'s answer as Bedrock sent it')
      t.same(converted.usage, { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })
    })

    t.test('a stream exception ends the stream unfinished', async (t) => {
      const events = sseEvents(hello()).filter((event) => event.type !== 'ping')
      const upToFirstDelta = events.slice(0, 3)
      const broken = Buffer.concat([bedrockStream(upToFirstDelta), exceptionMessage('throttlingException', 'Too many tokens, please wait before trying again.'), chunkMessage(events[3])])
      serveSigned(channel, answerStream(broken))
      const req = chat(MODEL, true)
      const converter = adaptor.createStream(channel, req)
      const relayed = await relay(await send(req), converter)
      const out = relayed.out + relayed.tail
      t.match(out, /"content":"Héllo, "/)
      t.match(out, /data: \{"error":\{"message":"Too many tokens, please wait before trying again\.","type":"throttlingException"/, 'the client learns why')
      t.notMatch(out, /wörld/, 'nothing after the exception')
      t.notMatch(out, /\[DONE\]/)
      t.notOk(converter.finished())
      t.equal(converter.usage(), undefined)

      serveSigned(channel, answerStream(Buffer.concat([bedrockStream(events.slice(0, 1)), exceptionMessage('modelStreamErrorException', 'The model failed.')])))
      const early = adaptor.createStream(channel, req)
      const relayedEarly = await relay(await send(req), early)
      t.equal(relayedEarly.out + relayedEarly.tail, '', 'nothing for the client yet: the gateway may try another channel')
      t.notOk(early.finished())

      const passReq: RelayRequest = { endpoint: 'messages', format: 'anthropic', model: MODEL, stream: true, body: { max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } }
      serveSigned(channel, answerStream(broken))
      const pass = adaptor.createStream(channel, passReq)
      const passed = await relay(await send(passReq), pass)
      t.match(passed.out + passed.tail, /event: error\ndata: \{"type":"error","error":\{"type":"rate_limit_error","message":"Too many tokens/)
      t.notOk(pass.finished())

      const corrupt = bedrockStream(events)
      corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 1) ^ 0xff, corrupt.length - 1)
      serveSigned(channel, answerStream(corrupt))
      const damaged = adaptor.createStream(channel, req)
      const relayedDamaged = await relay(await send(req), damaged)
      t.equal(readChunks(relayedDamaged.out + relayedDamaged.tail).content, 'Héllo, wörld 你好 🎉')
      t.notOk(damaged.finished(), 'a message failing its checksum is not read')
    })

    t.test('usage falls back on Bedrock\'s invocation metrics', async (t) => {
      const bare = sseEvents(hello()).map((event) => {
        if (event.type === 'message_start') return { ...event, message: { ...(event.message as object), usage: undefined } }
        if (event.type === 'message_delta') return { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null } }
        return event
      })
      serveSigned(channel, answerStream(bedrockStream(bare, { inputTokenCount: 20, outputTokenCount: 9, invocationLatency: 500, firstByteLatency: 100, cacheReadInputTokenCount: 6, cacheWriteInputTokenCount: 2 })))
      const req = chat(MODEL, true)
      const converter = adaptor.createStream(channel, req)
      const relayed = await relay(await send(req), converter)
      t.same(converter.usage(), { promptTokens: 28, completionTokens: 9, cachedTokens: 6, cacheWriteTokens: 2 })
      t.match(readChunks(relayed.out + relayed.tail), { content: 'Héllo, wörld 你好 🎉', finish: 'stop', done: true, usage: { prompt_tokens: 28, completion_tokens: 9 } })

      serveSigned(channel, answerStream(bedrockStream(bare, null)))
      const none = adaptor.createStream(channel, req)
      await relay(await send(req), none)
      t.ok(none.finished())
      t.equal(none.usage(), undefined, 'no usage is invented: the gateway counts')
    })

    t.test('the stream content type is Bedrock\'s framing', async (t) => {
      t.ok(adaptor.isStream?.('application/vnd.amazon.eventstream'))
      t.notOk(adaptor.isStream?.('application/json'))
      t.equal(JSON.parse(anthropicError('x', 'y')).type, 'error')
    })
  }
}
