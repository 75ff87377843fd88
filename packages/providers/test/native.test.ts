// Every adaptor that converts OpenAI clients to its provider's own protocol, against a real HTTP
// server on 127.0.0.1 speaking that protocol (fixtures in test/native/, one file per type):
// requests go over the wire exactly as the relay sends them (overrides and authorize included).
import t from 'tap'
import {
  adaptorFor,
  authorized,
  clearTokenCache,
  CredentialError,
  ProviderError,
  registeredTypes,
  upstreamRequest,
  type ChannelConfig,
  type Endpoint,
  type ProviderAdaptor,
  type RelayRequest
} from '../src/index.js'
import {
  bytesOf,
  json,
  MODEL,
  NATIVE_USAGE,
  type NativeContext,
  parsed,
  readChunks,
  relay,
  relayRequest,
  send,
  slowRanges,
  splitsACharacter,
  startUpstream,
  WEATHER_TOOL,
  write,
  writeAwkwardly
} from './kit.js'
import { nativeFixtures } from './native/index.js'

const NATIVE = await nativeFixtures()
const OPENAI_ENDPOINTS: Endpoint[] = ['chat', 'completions', 'embeddings', 'images_generations', 'audio_speech', 'moderations', 'rerank', 'responses']

/** What the client sees of a usage report: OpenAI's usage object. */
function wireUsage (usage: typeof NATIVE_USAGE | undefined): Record<string, unknown> | undefined {
  if (usage === undefined) return undefined
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cachedTokens } })
  }
}

for (const type of registeredTypes()) {
  const protocol = NATIVE[type]
  const found = adaptorFor(type)
  if (protocol === undefined || found === undefined) continue
  const adaptor: ProviderAdaptor = found

  t.test(`${adaptor.name} (type ${type}, native protocol)`, async (t) => {
    const up = await startUpstream(t)
    const channel: ChannelConfig = protocol.channel(up.origin)
    t.teardown(clearTokenCache)
    const chat = protocol.chat
    /** Answers with `body` (JSON, or a stream) when the request is authorized, else as the provider refuses. */
    const serve = (body: unknown, status = 200) => up.answer(async (res, seen) => {
      if (protocol.auxiliary?.(res, seen, channel) === true) return
      if (!await protocol.authorized(seen, channel)) {
        protocol.refuse(res)
        return
      }
      if (typeof body === 'string' || Buffer.isBuffer(body)) await writeAwkwardly(res, body, slowRanges(body, 'ö', 24), chat?.streamContentType)
      else json(res, status, body)
    })
    const sendReq = async (req: RelayRequest, over: ChannelConfig = channel) => await send(await upstreamRequest(adaptor, over, req))
    const convert = async (req: RelayRequest, res: Response) =>
      adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
    const usage = chat?.usage === null ? undefined : chat?.usage ?? NATIVE_USAGE

    t.test('serves the OpenAI endpoints it names, and no other protocol', async (t) => {
      const served = [...(chat === undefined ? [] : ['chat' as const]), ...(protocol.endpoints ?? [])]
      for (const endpoint of OPENAI_ENDPOINTS) t.equal(adaptor.supports(endpoint, 'openai'), served.includes(endpoint), endpoint)
      t.notOk(adaptor.supports('chat', 'gemini'))
      t.notOk(adaptor.supports('chat', 'anthropic'))
      t.throws(() => adaptor.buildRequest(channel, { ...relayRequest('chat', {}), format: 'anthropic' }), ProviderError)
    })

    t.test('a wrong credential fails and disables the channel', async (t) => {
      serve(chat?.answer ?? {})
      const endpoint = chat === undefined ? protocol.endpoints?.[0] ?? 'chat' : 'chat'
      const req = relayRequest(endpoint, { messages: [{ role: 'user', content: 'hi' }], input: ['hi'], query: 'q', documents: ['d'] })
      let action: string
      try {
        const wrong = await sendReq(req, { ...channel, key: protocol.wrongKey })
        if (wrong.status === 200) {
          // Providers that report errors with HTTP 200 (Tencent): the answer converts to a failure.
          const failure = adaptor.convertResponse(channel, req, wrong.status, wrong.headers.get('content-type') ?? '', await bytesOf(wrong)).failure
          t.ok(failure, 'the upstream refuses a wrong credential (in a 200 answer)')
          action = failure?.action ?? 'none'
        } else {
          action = adaptor.classifyFailure(wrong.status, await wrong.text()).action
        }
      } catch (err) {
        t.type(err, CredentialError, 'refused while obtaining the upstream credential')
        action = (err as CredentialError).action
      }
      t.equal(action, 'disable')
    })

    if (chat !== undefined) {
      t.test('sends a converted chat request with its credential', async (t) => {
        serve(chat.answer)
        const body = { model: 'client-alias', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }], ...(chat.tools === undefined ? {} : { tools: [WEATHER_TOOL] }) }
        const res = await sendReq(relayRequest('chat', body))
        t.equal(res.status, 200)
        const seen = up.last()
        t.equal(seen.method, 'POST')
        t.equal(seen.url, chat.path(MODEL, false))
        t.match(seen.headers['content-type'], /^application\/json/)
        chat.checkBody(t, parsed(seen.body), seen)
      })

      t.test('converts a non-streamed answer with its usage and text', async (t) => {
        serve(chat.answer)
        const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
        const converted = await convert(req, await sendReq(req))
        t.equal(converted.status, 200)
        t.match(converted.contentType, /^application\/json/)
        const answer = parsed(Buffer.from(converted.body))
        t.match(answer, { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }] })
        t.same(answer.usage, wireUsage(usage))
        t.same(converted.usage, usage)
        t.equal(converted.text, 'Hello there')
      })

      t.test('converts a stream that arrives in awkward chunks', async (t) => {
        serve(chat.stream())
        const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
        const converter = adaptor.createStream(channel, req)
        const res = await sendReq(req)
        t.equal(up.last().url, chat.path(MODEL, true))
        const relayed = await relay(res, converter)
        t.equal(relayed.error, undefined)
        if (chat.binaryStream !== true) t.ok(splitsACharacter(relayed.chunks), 'some chunk ends inside a multi-byte character')
        const summary = readChunks(relayed.out + relayed.tail)
        t.ok(summary.roleFirst, 'the role comes first')
        t.equal(summary.content, 'Héllo, wörld 你好 🎉')
        t.equal(summary.finish, 'stop')
        t.same(summary.usage, wireUsage(usage))
        t.ok(summary.done, 'ends with [DONE]')
        t.equal(relayed.tail, '', 'everything went out before the upstream closed')
        t.equal(relayed.finishedAfter.indexOf(true), relayed.finishedAfter.length - 1, 'finished only on the last chunk')
        t.same(converter.usage(), usage)
        t.equal(relayed.text, 'Héllo, wörld 你好 🎉')
      })

      const tools = chat.tools
      if (tools !== undefined) {
        t.test('converts tool calls, streamed and not', async (t) => {
          const body = { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER_TOOL], tool_choice: 'auto' }
          serve(tools.answer)
          const req = relayRequest('chat', body)
          const answer = parsed(Buffer.from((await convert(req, await sendReq(req))).body))
          t.match(answer, { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather' } }] } }] })
          const calls = (answer.choices as Array<{ message: { tool_calls: Array<{ function: { arguments: string } }> } }>)[0]?.message.tool_calls
          t.same(JSON.parse(calls?.[0]?.function.arguments ?? ''), { city: 'Paris' }, 'arguments as a JSON string')

          serve(tools.stream())
          const streamed = relayRequest('chat', { ...body, stream: true }, true)
          const relayed = await relay(await sendReq(streamed), adaptor.createStream(channel, streamed))
          const summary = readChunks(relayed.out + relayed.tail)
          t.equal(summary.toolCalls.length, 1)
          t.equal(summary.toolCalls[0]?.id, 'call_1')
          t.equal(summary.toolCalls[0]?.name, 'get_weather')
          t.same(JSON.parse(summary.toolCalls[0]?.arguments ?? ''), { city: 'Paris' })
          t.equal(summary.finish, 'tool_calls')
          t.ok(summary.done)
        })
      }

      t.test('a stream cut before its end is not finished', async (t) => {
        const stream = Buffer.from(chat.stream())
        // Cut inside the second text piece: the first piece's events are complete.
        const marker = chat.binaryStream === true ? Math.floor(stream.length * 0.6) : stream.indexOf('你')
        const cut = stream.subarray(0, marker)
        up.answer(async (res, seen) => {
          if (protocol.auxiliary?.(res, seen, channel) === true) return
          res.writeHead(200, { 'Content-Type': chat.streamContentType ?? 'text/event-stream' })
          await write(res, cut)
          res.destroy()
        })
        const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
        const converter = adaptor.createStream(channel, req)
        const relayed = await relay(await sendReq(req), converter)
        t.ok(relayed.error, 'the client saw the connection drop')
        t.notOk(converter.finished())
        t.equal(converter.usage(), undefined)
        const sent = chat.wholeAnswer === true ? '' : 'Héllo, '
        t.equal(readChunks(relayed.out + relayed.tail).content, sent, 'the text of the complete events went out')
        t.equal(relayed.text, sent)
      })

      t.test('the channel test request works end to end', async (t) => {
        serve(chat.answer)
        const model = adaptor.defaultModels[0] ?? 'my-model'
        const req = adaptor.testRequest(channel, model)
        t.equal(req.model, model)
        const res = await sendReq(req)
        t.equal(up.last().url, chat.path(model, false))
        t.same((await convert(req, res)).usage, usage)
      })
    }

    t.test('classifies failures', async (t) => {
      const endpoint = chat === undefined ? protocol.endpoints?.[0] ?? 'chat' : 'chat'
      for (const c of protocol.errors) {
        up.answer((res, seen) => {
          if (protocol.auxiliary?.(res, seen, channel) === true) return
          res.writeHead(c.status, { 'Content-Type': 'application/json' }).end(c.body)
        })
        const res = await sendReq(relayRequest(endpoint, { messages: [{ role: 'user', content: 'hi' }], input: ['hi'] }))
        t.equal(res.status, c.status)
        const failure = adaptor.classifyFailure(res.status, await res.text())
        t.equal(failure.action, c.action, `${c.what}: ${c.action}`)
        t.equal(failure.code, c.code, `${c.what}: code`)
        t.ok(failure.message.length > 0, `${c.what}: a message`)
      }
      t.match(adaptor.classifyFailure(502, '<html>Bad gateway</html>'), { action: 'retry', message: /502/ })
    })

    const models = protocol.models
    t.test('lists the upstream models', async (t) => {
      const built = adaptor.listModelsRequest(channel)
      if (models === undefined) {
        t.equal(built, undefined, 'the provider has no model list')
        return
      }
      serve(models.answer)
      if (built === undefined) {
        t.fail('no model list request')
        return
      }
      t.equal(built.method, 'GET')
      const res = await send(await authorized(adaptor, channel, built))
      t.equal(res.status, 200, 'authorized')
      t.equal(up.last().url, models.path)
      t.same(adaptor.parseModels(await res.text()), ['model-a', 'model-b'])
      t.throws(() => adaptor.parseModels('<html>'), ProviderError)
    })

    t.test('uses the default base URL when the channel has none', async (t) => {
      const bare = { ...channel, baseUrl: '' }
      if (adaptor.defaultBaseUrl === '') {
        // A type without a default (a self-hosted product): the admin must give the base URL.
        t.throws(() => adaptor.buildRequest(bare, relayRequest('chat', { messages: [] })), { code: 'PROV_ERR_NO_BASE_URL' })
        return
      }
      const expected = protocol.defaultUrls?.(bare, MODEL) ?? {
        chat: chat === undefined ? undefined : adaptor.defaultBaseUrl + chat.path(MODEL, false),
        models: models === undefined ? undefined : adaptor.defaultBaseUrl + models.path
      }
      t.match(adaptor.defaultBaseUrl, /^https:\/\/[^/]+/)
      if (expected.chat !== undefined) t.equal(adaptor.buildRequest(bare, relayRequest('chat', { messages: [] })).url, expected.chat)
      if (expected.models !== undefined) t.equal(adaptor.listModelsRequest(bare)?.url, expected.models)
    })

    const extra = protocol.extra
    if (extra !== undefined) {
      const ctx: NativeContext = { up, channel, adaptor, serve, send: sendReq }
      t.test('the type\'s own behaviour', async (t) => { await extra(t, ctx) })
    }
  })
}

t.test('every native fixture belongs to a registered adaptor', async (t) => {
  for (const type of Object.keys(NATIVE).map(Number)) t.ok(adaptorFor(type), `type ${type} has an adaptor`)
})
