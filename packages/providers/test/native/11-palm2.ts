// Type 11: Google's PaLM 2 chat API (v1beta2 generateMessage), key in x-goog-api-key. PaLM
// reports no usage and cannot stream: a streamed request gets the one JSON answer.
import { bytesOf, type NativeProtocol, parsed, readChunks, relay, relayRequest } from '../kit.js'
import { geminiError } from './gemini-wire.js'

const palmAnswer = (content: string) => ({
  candidates: [{ author: '1', content }],
  messages: [{ author: '0', content: 'hi' }]
})

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 11, type: 11, key: 'AIza-test-11', baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'AIza-wrong',
  authorized: (seen, channel) => seen.headers['x-goog-api-key'] === channel.key && seen.headers.authorization === undefined && !seen.url.includes('key='),
  refuse: (res) => {
    res.writeHead(400, { 'Content-Type': 'application/json' }).end(geminiError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'))
  },
  chat: {
    // The same method whether the client streams or not.
    path: (model) => `/v1beta2/models/${model}:generateMessage`,
    answer: palmAnswer('Hello there'),
    stream: () => JSON.stringify(palmAnswer('Héllo, wörld 你好 🎉'), null, 2),
    streamContentType: 'application/json; charset=UTF-8',
    wholeAnswer: true,
    usage: null,
    checkBody: (t, body) => {
      t.same(body.prompt, { messages: [{ author: '0', content: 'Weather in Paris?' }], context: 'Be brief.' }, 'context and messages')
      t.equal(body.model, undefined, 'the model is in the URL')
    }
  },
  models: {
    path: '/v1beta2/models?pageSize=1000',
    answer: {
      models: [
        { name: 'models/model-a', supportedGenerationMethods: ['generateMessage', 'countMessageTokens'] },
        { name: 'models/text-bison-001', supportedGenerationMethods: ['generateText'] },
        { name: 'models/model-b', supportedGenerationMethods: ['generateMessage'] }
      ]
    }
  },
  errors: [
    { what: '400 invalid key', status: 400, body: geminiError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'), action: 'disable', code: 'API_KEY_INVALID' },
    { what: '403 permission denied', status: 403, body: geminiError(403, 'PERMISSION_DENIED', 'Generative Language API has not been used in project 1 before or it is disabled.'), action: 'disable', code: 'PERMISSION_DENIED' },
    { what: '429 quota', status: 429, body: geminiError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for quota metric.'), action: 'retry', code: 'RESOURCE_EXHAUSTED' },
    { what: '500 internal', status: 500, body: geminiError(500, 'INTERNAL', 'An internal error has occurred.'), action: 'retry', code: 'INTERNAL' },
    { what: '400 invalid argument', status: 400, body: geminiError(400, 'INVALID_ARGUMENT', 'prompt.messages must alternate between authors.'), action: 'client', code: 'INVALID_ARGUMENT' },
    { what: '404 unknown model', status: 404, body: geminiError(404, 'NOT_FOUND', 'models/chat-bison-9 is not found.'), action: 'client', code: 'NOT_FOUND' }
  ],
  extra: async (t, { up, channel, adaptor, serve, send }) => {
    t.test('a streamed request is asked unstreamed; its JSON answer becomes chunk events', async (t) => {
      t.ok(adaptor.isStream?.('application/json; charset=UTF-8'), 'the JSON answer to a streamed request goes to the stream converter')
      serve(palmAnswer('Hi!'))
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      const converter = adaptor.createStream(channel, req)
      const relayed = await relay(await send(req), converter)
      t.equal(parsed(up.last().body).stream, undefined, 'nothing asks PaLM to stream')
      const summary = readChunks(relayed.out + relayed.tail)
      t.match(summary, { content: 'Hi!', finish: 'stop', roleFirst: true, done: true, usage: undefined })
      t.ok(converter.finished())
      t.equal(converter.usage(), undefined, 'no usage: the gateway counts')
      t.equal(relayed.text, 'Hi!')
    })

    t.test('an answer the filters emptied is finished by content_filter', async (t) => {
      serve({ messages: [{ author: '0', content: 'hi' }], filters: [{ reason: 'OTHER' }] })
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
      const res = await send(req)
      const converted = adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
      t.match(parsed(Buffer.from(converted.body)), { object: 'chat.completion', choices: [{ finish_reason: 'content_filter', message: { content: '' } }] })
      t.equal(converted.usage, undefined)
      t.equal(converted.text, '')
    })

    t.test('turns alternate, sampling and candidates map', async (t) => {
      serve(palmAnswer('x'))
      await send(relayRequest('chat', {
        messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'a' }, { role: 'user', content: 'b' }, { role: 'assistant', content: 'c' }, { role: 'user', content: 'd' }],
        temperature: 1.5, top_p: 0.9, top_k: 40, n: 2, max_tokens: 10
      }))
      t.same(parsed(up.last().body), {
        prompt: { messages: [{ author: '0', content: 'a\nb' }, { author: '1', content: 'c' }, { author: '0', content: 'd' }], context: 'S' },
        temperature: 1, topP: 0.9, topK: 40, candidateCount: 2
      })
    })
  }
}
