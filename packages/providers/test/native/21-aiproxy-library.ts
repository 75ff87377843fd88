// Type 21: a knowledge base (library) of AIProxy, POST /api/library/ask; key `<api key>|<library id>`.
// AIProxy publishes no reference for this endpoint: the shapes below are those its own clients read
// ({success, answer, documents: [{title, url}], errCode, errMsg}; streamed {content, finish}).
import { CredentialError, upstreamRequest } from '../../src/index.js'
import { bytesOf, MODEL, parsed, readChunks, relay, relayRequest, type NativeProtocol } from '../kit.js'

const API_KEY = 'sk-aip-test21'
const LIBRARY = 10817

export const libraryAnswer = (answer: string, documents: unknown[] = []) => ({ success: true, answer, documents, errCode: 0, errMsg: '' })
export const libraryFailure = (errCode: number | string, errMsg: string) => JSON.stringify({ success: false, answer: null, documents: null, errCode, errMsg })
export const libraryStream = (pieces: string[], documents: unknown[] = []): string =>
  pieces.map((content) => `data: ${JSON.stringify({ content, finish: false })}\n\n`).join('') +
  `data: ${JSON.stringify({ content: '', finish: true, documents })}\n\n`

const DOCUMENTS = [{ title: 'Paris guide', url: 'https://docs.test/paris' }, { title: 'Climate', url: '' }, { title: '', url: '' }]

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 21, type: 21, key: `${API_KEY}|${LIBRARY}`, baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: `sk-aip-wrong|${LIBRARY}`,
  authorized: (seen) => seen.headers['api-key'] === API_KEY && seen.headers.authorization === `Bearer ${API_KEY}`,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(libraryFailure(401, 'Invalid API key'))
  },
  chat: {
    path: () => '/api/library/ask',
    answer: libraryAnswer('Hello there'),
    stream: () => libraryStream(['Héllo, ', 'wörld 你好 🎉']),
    checkBody: (t, body) => {
      t.same(body, { model: MODEL, query: 'System: Be brief.\n\nUser: Weather in Paris?', libraryId: LIBRARY, stream: false }, 'one query, the library from the key')
    },
    usage: null
  },
  errors: [
    { what: '401 invalid key', status: 401, body: libraryFailure(401, 'Invalid API key'), action: 'disable', code: '401' },
    { what: '403 forbidden library', status: 403, body: libraryFailure(403, 'No permission for this library'), action: 'disable', code: '403' },
    { what: '400 balance exhausted', status: 400, body: libraryFailure('BALANCE_NOT_ENOUGH', '账户余额不足'), action: 'disable', code: 'BALANCE_NOT_ENOUGH' },
    { what: '400 unknown library', status: 400, body: libraryFailure('LIBRARY_NOT_FOUND', '知识库不存在'), action: 'client', code: 'LIBRARY_NOT_FOUND' },
    { what: '429 rate limit', status: 429, body: libraryFailure(429, 'Too many requests'), action: 'retry', code: '429' },
    { what: '500 server error', status: 500, body: libraryFailure(500, 'Internal error'), action: 'retry', code: '500' }
  ],
  extra: async (t, ctx) => {
    const { up, channel, serve, adaptor } = ctx

    t.test('documents are appended as references; only the answer is counted', async (t) => {
      serve(libraryAnswer('Paris is sunny [1].', DOCUMENTS))
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'Weather?' }] })
      const res = await ctx.send(req)
      const out = adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
      t.match(parsed(Buffer.from(out.body)), {
        object: 'chat.completion',
        choices: [{ message: { content: 'Paris is sunny [1].\n\nReferences:\n[1] [Paris guide](https://docs.test/paris)\n[2] Climate' }, finish_reason: 'stop' }]
      })
      t.equal(out.usage, undefined)
      t.equal(out.text, 'Paris is sunny [1].')

      serve(libraryStream(['Paris is ', 'sunny [1].'], DOCUMENTS))
      const streamed = relayRequest('chat', { messages: [{ role: 'user', content: 'Weather?' }], stream: true }, true)
      const converter = adaptor.createStream(channel, streamed)
      const relayed = await relay(await ctx.send(streamed), converter)
      t.equal(parsed(up.last().body).stream, true)
      const summary = readChunks(relayed.out + relayed.tail)
      t.equal(summary.content, 'Paris is sunny [1].\n\nReferences:\n[1] [Paris guide](https://docs.test/paris)\n[2] Climate')
      t.ok(summary.done)
      t.equal(relayed.text, 'Paris is sunny [1].', 'the references are not counted')
    })

    t.test('a key without its library id is refused before any call', async (t) => {
      const before = up.seen.length
      for (const key of [API_KEY, `${API_KEY}|`, `|${LIBRARY}`]) {
        await t.rejects(upstreamRequest(adaptor, { ...channel, key }, relayRequest('chat', { messages: [] })), CredentialError)
        const thrown = (() => {
          try {
            adaptor.buildRequest({ ...channel, key }, relayRequest('chat', { messages: [] }))
            return undefined
          } catch (err) {
            return err
          }
        })()
        t.type(thrown, CredentialError)
        t.match(thrown, { action: 'disable', status: 401 }, 'the channel is disabled')
      }
      t.equal(up.seen.length, before)
      const named = adaptor.buildRequest({ ...channel, key: `${API_KEY}|lib-abc`, baseUrl: `${up.origin}/api` }, relayRequest('chat', { messages: [] }))
      t.equal(named.url, `${up.origin}/api/library/ask`, 'a base URL with /api is not doubled')
      t.equal(JSON.parse(String(named.body)).libraryId, 'lib-abc', 'a library id that is not a number is sent as text')
      const field = adaptor.buildRequest({ ...channel, key: API_KEY, other: ' 4242 ' }, relayRequest('chat', { messages: [] }))
      t.equal(JSON.parse(String(field.body)).libraryId, 4242, 'the knowledge base field names the library')
      t.equal((field.headers as Record<string, string>)['Api-Key'], API_KEY)
      const both = adaptor.buildRequest({ ...channel, other: '7' }, relayRequest('chat', { messages: [] }))
      t.equal(JSON.parse(String(both.body)).libraryId, 7, 'the field wins over a library in the key')
    })

    t.test('a failure inside a 2xx answer or a stream', async (t) => {
      serve(JSON.parse(libraryFailure('MODEL_NOT_SUPPORT', 'model not supported')))
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
      const res = await ctx.send(req)
      const out = adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
      t.equal(out.status, 502)
      t.match(parsed(Buffer.from(out.body)), { error: { message: 'model not supported', code: 'MODEL_NOT_SUPPORT' } })

      const streamed = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      serve(`data: ${libraryFailure(500, 'busy')}\n\n`)
      let converter = adaptor.createStream(channel, streamed)
      let relayed = await relay(await ctx.send(streamed), converter)
      t.equal(relayed.out + relayed.tail, '', 'nothing before the first text: the relay may retry')
      t.notOk(converter.finished())

      serve(`data: {"content":"Par","finish":false}\n\ndata: ${libraryFailure(500, 'busy')}\n\n`)
      converter = adaptor.createStream(channel, streamed)
      relayed = await relay(await ctx.send(streamed), converter)
      t.ok(relayed.out.includes('"error":{"message":"busy"'), 'an error after text reaches the client')
      t.notOk(converter.finished())

      serve('data: {"content":"Done"}\n\ndata: [DONE]\n\n')
      converter = adaptor.createStream(channel, streamed)
      relayed = await relay(await ctx.send(streamed), converter)
      t.ok(converter.finished(), '[DONE] ends the stream too')
      t.equal(readChunks(relayed.out).content, 'Done')
    })

    t.test('lists no models', async (t) => {
      t.equal(adaptor.listModelsRequest(channel), undefined)
      t.equal(adaptor.buildRequest({ ...channel, baseUrl: '' }, relayRequest('chat', { messages: [] })).url, 'https://api.aiproxy.io/api/library/ask')
    })
  }
}
