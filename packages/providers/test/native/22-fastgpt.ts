// Type 22: a FastGPT app's OpenAI-compatible API ({base}/api/v1/chat/completions), app key as a bearer token.
import type { RelayRequest } from '../../src/index.js'
import { bytesOf, MODEL, parsed, readChunks, relay, relayRequest, type NativeContext, type NativeProtocol } from '../kit.js'

/** FastGPT's chunk (textAdaptGptResponse): id, object and model left empty, the role in every delta. */
export const fastGPTChunk = (content: string | null, finish: string | null = null) => ({
  id: '', object: '', created: 0, model: '', choices: [{ delta: { role: 'assistant', content }, index: 0, finish_reason: finish }]
})

/** FastGPT's non-streamed answer: its placeholder usage, the chat id as id. */
export const fastGPTAnswer = (content: unknown, extra: Record<string, unknown> = {}) => ({
  ...extra, id: '', model: '', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 1 },
  choices: [{ message: { role: 'assistant', content }, finish_reason: 'stop', index: 0 }]
})

/** FastGPT's error envelope, which current versions send with HTTP 500. */
export const fastGPTError = (code: number, statusText: string, message: string) => JSON.stringify({ code, statusText, message, data: null })

const sse = (events: Array<[string | undefined, unknown]>): string =>
  events.map(([name, data]) => `${name === undefined ? '' : `event: ${name}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join('')

async function converted (ctx: NativeContext, req: RelayRequest, channel = ctx.channel) {
  const res = await ctx.send(req, channel)
  const out = ctx.adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
  return { ...out, json: parsed(Buffer.from(out.body)) }
}

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 22, type: 22, key: 'fastgpt-test22key', baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'fastgpt-wrong',
  authorized: (seen, channel) => seen.headers.authorization === `Bearer ${channel.key}`,
  refuse: (res) => {
    res.writeHead(500, { 'Content-Type': 'application/json' }).end(fastGPTError(514, 'unAuthApiKey', 'Api Key 不合法'))
  },
  chat: {
    path: () => '/api/v1/chat/completions',
    answer: fastGPTAnswer('Hello there'),
    stream: () => sse([
      [undefined, fastGPTChunk('Héllo, ')],
      [undefined, fastGPTChunk('wörld 你好 🎉')],
      [undefined, fastGPTChunk(null, 'stop')],
      [undefined, '[DONE]']
    ]),
    checkBody: (t, body) => {
      t.same(body, { model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }] }, 'the OpenAI body as the client sent it')
    },
    usage: null
  },
  errors: [
    { what: '500 invalid API key', status: 500, body: fastGPTError(514, 'unAuthApiKey', 'Api Key 不合法'), action: 'disable', code: 'unAuthApiKey' },
    { what: '500 deleted API key', status: 500, body: fastGPTError(506000, 'openapiUnExist', 'Api Key 不存在'), action: 'disable', code: 'openapiUnExist' },
    { what: '500 no AI points left', status: 500, body: fastGPTError(500003, 'aiPointsNotEnough', 'AI积分不足'), action: 'disable', code: 'aiPointsNotEnough' },
    { what: '500 app deleted', status: 500, body: fastGPTError(502000, 'appUnExist', '应用不存在'), action: 'disable', code: 'appUnExist' },
    { what: '403 unauthorized', status: 403, body: fastGPTError(403, 'unAuthorization', '凭证错误'), action: 'disable', code: 'unAuthorization' },
    { what: '500 too many requests', status: 500, body: fastGPTError(429, 'tooManyRequest', 'Too many request'), action: 'retry', code: 'tooManyRequest' },
    { what: '500 workflow failure', status: 500, body: fastGPTError(500, '', 'messages is empty'), action: 'retry', code: '500' },
    { what: '400 bad request', status: 400, body: fastGPTError(400, 'invalidParams', 'chatId is invalid'), action: 'client', code: 'invalidParams' }
  ],
  extra: async (t, ctx) => {
    const { up, channel, serve, adaptor } = ctx

    t.test('detail mode: only answer events reach the client, as plain OpenAI chunks', async (t) => {
      serve(sse([
        ['flowNodeStatus', { status: 'running', name: 'AI 对话' }],
        ['answer', fastGPTChunk('Sun')],
        ['toolCall', { tool: { id: 't1', toolName: 'search', params: '' } }],
        ['fastAnswer', fastGPTChunk('ny')],
        ['answer', fastGPTChunk(null, 'stop')],
        ['answer', '[DONE]'],
        ['flowResponses', [{ moduleName: 'AI 对话', tokens: 30 }]]
      ]))
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'Weather?' }], stream: true, detail: true, chatId: 'chat-9', variables: { city: 'Paris' } }, true)
      const converter = adaptor.createStream(channel, req)
      const relayed = await relay(await ctx.send(req), converter)
      t.match(parsed(up.last().body), { detail: true, chatId: 'chat-9', variables: { city: 'Paris' }, stream: true, model: MODEL })
      t.notOk('stream_options' in parsed(up.last().body), 'no stream_options')
      const out = relayed.out + relayed.tail
      t.notOk(out.includes('event:'), 'no event names')
      t.notOk(out.includes('flowNodeStatus') || out.includes('moduleName') || out.includes('toolName'), 'no workflow events')
      const summary = readChunks(out)
      t.equal(summary.content, 'Sunny')
      t.equal(summary.finish, 'stop')
      t.ok(summary.done)
      t.ok(converter.finished())
      t.equal(converter.usage(), undefined)
      t.equal(relayed.text, 'Sunny')
      t.match(JSON.parse(out.split('\n\n')[0]!.slice('data: '.length)), { object: 'chat.completion.chunk', id: 'chatcmpl-fastgpt', model: MODEL })
    })

    t.test('detail mode without streaming: the list of responses becomes text, FastGPT\'s extras stay', async (t) => {
      serve(fastGPTAnswer([
        { type: 'reasoning', reasoning: { content: 'Think.' } },
        { type: 'text', text: { content: 'Sunny ' } },
        { type: 'tool', tools: [{ id: 't1', toolName: 'search' }] },
        { type: 'text', text: { content: 'in Paris.' } }
      ], { responseData: [{ moduleName: 'AI 对话', tokens: 30 }], newVariables: { city: 'Paris' } }))
      const out = await converted(ctx, relayRequest('chat', { messages: [{ role: 'user', content: 'Weather?' }], detail: true }))
      t.match(out.json, {
        object: 'chat.completion',
        model: MODEL,
        choices: [{ message: { role: 'assistant', content: 'Sunny in Paris.', reasoning_content: 'Think.' } }],
        responseData: [{ moduleName: 'AI 对话' }],
        newVariables: { city: 'Paris' }
      })
      t.equal(out.json.usage, undefined, 'the placeholder usage is not shown')
      t.equal(out.usage, undefined)
      t.equal(out.text, 'Sunny in Paris.Think.')
    })

    t.test('a deployment that reports real usage is billed on it', async (t) => {
      serve({ ...fastGPTAnswer('Hi'), usage: { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 } })
      const out = await converted(ctx, relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] }))
      t.same(out.usage, { promptTokens: 40, completionTokens: 5 })
      t.same(out.json.usage, { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 })
      serve({ ...fastGPTAnswer('Hi'), usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } })
      t.equal((await converted(ctx, relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] }))).usage, undefined, 'zeros are no usage')
    })

    t.test('an error envelope with HTTP 200 (older versions) reaches the client as an error', async (t) => {
      serve(JSON.parse(fastGPTError(514, 'unAuthApiKey', 'Api Key 不合法')))
      const out = await converted(ctx, relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] }))
      t.equal(out.status, 401)
      t.match(out.json, { error: { message: 'Api Key 不合法', code: 'unAuthApiKey' } })
    })

    t.test('stream errors', async (t) => {
      const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], stream: true }, true)
      serve(sse([['error', { message: '您的工作流版本过低' }]]))
      let converter = adaptor.createStream(channel, req)
      let relayed = await relay(await ctx.send(req), converter)
      t.equal(relayed.out + relayed.tail, '', 'an error before any chunk sends nothing (the relay may retry)')
      serve(sse([[undefined, fastGPTChunk('Par')], ['error', { message: 'node failed' }]]))
      converter = adaptor.createStream(channel, req)
      relayed = await relay(await ctx.send(req), converter)
      t.ok(relayed.out.includes('"error":{"message":"node failed"'))
      t.notOk(converter.finished())
    })

    t.test('base URLs: the bare origin, FastGPT\'s `/api` and `/api/v1`; no model list', async (t) => {
      const req = relayRequest('chat', { messages: [] })
      for (const base of [up.origin, `${up.origin}/api`, `${up.origin}/api/v1/`]) {
        t.equal(adaptor.buildRequest({ ...channel, baseUrl: base }, req).url, `${up.origin}/api/v1/chat/completions`, base)
      }
      t.equal(adaptor.listModelsRequest(channel), undefined)
      t.equal(adaptor.defaultBaseUrl, '')
      t.same(adaptor.defaultModels, ['fastgpt'])
    })
  }
}
