// Type 37: a Dify app's service API (api.dify.ai or self-hosted), app key as a bearer token.
import { difyOptions, foldedQuery } from '../../src/dify/index.js'
import type { ChannelConfig, RelayRequest } from '../../src/index.js'
import { bytesOf, MODEL, parsed, readChunks, relay, relayRequest, type NativeContext, type NativeProtocol } from '../kit.js'

/** Dify's usage object: tokens, Dify's own prices and latency. */
export const DIFY_USAGE = {
  prompt_tokens: 12, prompt_unit_price: '0.15', prompt_price_unit: '0.000001', prompt_price: '0.0000018',
  completion_tokens: 7, completion_unit_price: '0.6', completion_price_unit: '0.000001', completion_price: '0.0000042',
  total_tokens: 19, total_price: '0.000006', currency: 'USD', latency: 0.61
}

const IDS = { task_id: 'task-1', message_id: 'msg-1', conversation_id: 'conv-1', created_at: 1_700_000_000 }

/** Dify's stream: `data: {"event": …}` events (and `event: ping` keep-alives without data). */
export const difyEvents = (events: Array<Record<string, unknown>>): string =>
  'event: ping\n\n' + events.map((event) => `data: ${JSON.stringify({ ...IDS, ...event })}\n\n`).join('')

const messageEnd = (usage: unknown = DIFY_USAGE) => ({ event: 'message_end', id: 'msg-1', metadata: { usage, retriever_resources: [] } })

export const difyError = (status: number, code: string, message: string): string => JSON.stringify({ code, message, status })

const chatAnswer = (answer: string, usage: unknown = DIFY_USAGE) => ({
  event: 'message', ...IDS, id: 'msg-1', mode: 'chat', answer, metadata: { usage, retriever_resources: [] }
})

const ask = (messages: unknown[], extra: Record<string, unknown> = {}, stream = false): RelayRequest =>
  relayRequest('chat', { messages, ...extra, ...(stream ? { stream: true } : {}) }, stream)

async function converted (ctx: NativeContext, channel: ChannelConfig, req: RelayRequest): Promise<Record<string, unknown>> {
  const res = await ctx.send(req, channel)
  const out = ctx.adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
  return { status: out.status, usage: out.usage, text: out.text, body: parsed(Buffer.from(out.body)) }
}

async function streamed (ctx: NativeContext, channel: ChannelConfig, req: RelayRequest) {
  const converter = ctx.adaptor.createStream(channel, req)
  const relayed = await relay(await ctx.send(req, channel), converter)
  // Error events are checked apart: the summary reads the chunks.
  const chunks = (relayed.out + relayed.tail).split('\n\n').filter((event) => event !== '' && !event.startsWith('data: {"error"'))
  return { converter, relayed, summary: readChunks(chunks.map((event) => `${event}\n\n`).join('')) }
}

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 37, type: 37, key: 'app-test37key', baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'app-wrong',
  authorized: (seen, channel) => seen.headers.authorization === `Bearer ${channel.key}`,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(difyError(401, 'unauthorized', 'Access token is invalid'))
  },
  chat: {
    path: () => '/v1/chat-messages',
    answer: chatAnswer('Hello there'),
    stream: () => difyEvents([
      { event: 'message', id: 'msg-1', answer: 'Héllo, ' },
      { event: 'message', id: 'msg-1', answer: 'wörld 你好 🎉' },
      messageEnd()
    ]),
    checkBody: (t, body) => {
      t.same(body, {
        inputs: {},
        query: 'System: Be brief.\n\nUser: Weather in Paris?',
        conversation_id: '',
        auto_generate_name: false,
        response_mode: 'blocking',
        user: 'modelgate-channel-37'
      }, 'the conversation folded into one query, a fixed user per channel')
    },
    usage: { promptTokens: 12, completionTokens: 7 }
  },
  errors: [
    { what: '401 invalid app key', status: 401, body: difyError(401, 'unauthorized', 'Access token is invalid'), action: 'disable', code: 'unauthorized' },
    { what: '400 provider not initialized', status: 400, body: difyError(400, 'provider_not_initialize', 'No valid model provider credentials found. Please go to Settings -> Model Provider to complete your provider credentials.'), action: 'disable', code: 'provider_not_initialize' },
    { what: '400 provider quota exceeded', status: 400, body: difyError(400, 'provider_quota_exceeded', 'Your quota for Dify Hosted Model Provider has been exhausted. Please go to Settings -> Model Provider to complete your own provider credentials.'), action: 'disable', code: 'provider_quota_exceeded' },
    { what: '400 app unavailable', status: 400, body: difyError(400, 'app_unavailable', 'App unavailable, please check your app configurations.'), action: 'disable', code: 'app_unavailable' },
    { what: '400 not a chat app', status: 400, body: difyError(400, 'not_chat_app', 'Please check if your app mode matches the right API route.'), action: 'disable', code: 'not_chat_app' },
    { what: '400 invalid parameter', status: 400, body: difyError(400, 'invalid_param', 'query is required'), action: 'client', code: 'invalid_param' },
    { what: '400 model not supported', status: 400, body: difyError(400, 'model_currently_not_support', 'Dify Hosted OpenAI trial currently not support the GPT-4 model.'), action: 'client', code: 'model_currently_not_support' },
    { what: '400 completion request error', status: 400, body: difyError(400, 'completion_request_error', 'Completion request failed.'), action: 'retry', code: 'completion_request_error' },
    { what: '404 conversation not found', status: 404, body: difyError(404, 'not_found', 'Conversation Not Exists.'), action: 'client', code: 'not_found' },
    { what: '429 app rate limit', status: 429, body: difyError(429, 'too_many_requests', 'Too many requests. Please try again later.'), action: 'retry', code: 'too_many_requests' },
    { what: '500 internal error', status: 500, body: difyError(500, 'internal_server_error', 'The server encountered an internal error.'), action: 'retry', code: 'internal_server_error' }
  ],
  extra: async (t, ctx) => {
    const { up, channel, serve } = ctx

    t.test('an agent app streams even for a non-streamed client, which gets the whole answer once', async (t) => {
      const agent = { ...channel, other: 'agent' }
      serve(difyEvents([
        { event: 'agent_thought', id: 'th-1', position: 1, thought: '', tool: 'weather', tool_input: '{"city": "Paris"}', observation: '' },
        { event: 'agent_thought', id: 'th-1', position: 1, thought: '', tool: 'weather', tool_input: '{"city": "Paris"}', observation: 'sunny' },
        { event: 'agent_message', id: 'msg-1', answer: 'Sunny ' },
        { event: 'agent_message', id: 'msg-1', answer: 'in Paris.' },
        // Newer agent apps close with the whole answer once more.
        { event: 'message', id: 'msg-1', answer: 'Sunny in Paris.' },
        messageEnd()
      ]))
      const req = ask([{ role: 'user', content: 'Weather in Paris?' }])
      const out = await converted(ctx, agent, req)
      t.equal(parsed(up.last().body).response_mode, 'streaming', 'agent apps refuse blocking mode')
      t.equal(up.last().url, '/v1/chat-messages')
      t.match(out.body, { object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'Sunny in Paris.' }, finish_reason: 'stop' }] })
      t.notOk(JSON.stringify(out.body).includes('reasoning_content'), 'no thoughts unless asked for')
      t.same(out.usage, { promptTokens: 12, completionTokens: 7 })
      t.same((out.body as { usage: unknown }).usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })

      const s = await streamed(ctx, { ...agent, other: 'agent,thoughts' }, ask([{ role: 'user', content: 'Weather in Paris?' }], {}, true))
      t.equal(s.summary.content, 'Sunny in Paris.')
      t.equal(s.summary.reasoning, 'Tool weather: {"city": "Paris"}\n', 'one reasoning line per tool call')
      t.ok(s.summary.done)
      t.same(s.converter.usage(), { promptTokens: 12, completionTokens: 7 })
    })

    t.test('a workflow app gets the query as an input and answers with its outputs; Dify gives only a total, so no usage', async (t) => {
      const workflow = { ...channel, other: 'workflow' }
      serve({ task_id: 'task-1', workflow_run_id: 'run-1', data: { id: 'run-1', workflow_id: 'wf-1', status: 'succeeded', outputs: { answer: 'Sunny.' }, error: null, elapsed_time: 1.2, total_tokens: 31, total_steps: 3, created_at: 1, finished_at: 2 } })
      const out = await converted(ctx, workflow, ask([{ role: 'user', content: 'Weather?' }], { inputs: { city: 'Paris' } }))
      t.equal(up.last().url, '/v1/workflows/run')
      t.same(parsed(up.last().body), { inputs: { city: 'Paris', query: 'Weather?' }, response_mode: 'blocking', user: 'modelgate-channel-37' })
      t.match(out.body, { id: 'chatcmpl-run-1', choices: [{ message: { content: 'Sunny.' }, finish_reason: 'stop' }] })
      t.equal(out.usage, undefined)
      t.equal(out.text, 'Sunny.')

      const run = { task_id: 'task-1', workflow_run_id: 'run-1' }
      serve(difyEvents([
        { event: 'workflow_started', ...run, data: { id: 'run-1' } },
        { event: 'node_started', ...run, data: { id: 'n1', title: 'LLM' } },
        { event: 'text_chunk', ...run, data: { text: 'Sun', from_variable_selector: ['n1', 'text'] } },
        { event: 'text_chunk', ...run, data: { text: 'ny.', from_variable_selector: ['n1', 'text'] } },
        { event: 'node_finished', ...run, data: { id: 'n1', title: 'LLM', status: 'succeeded' } },
        { event: 'workflow_finished', ...run, data: { id: 'run-1', status: 'succeeded', outputs: { answer: 'Sunny.' }, total_tokens: 31 } }
      ]))
      const s = await streamed(ctx, { ...workflow, other: 'workflow thoughts' }, ask([{ role: 'user', content: 'Weather?' }], {}, true))
      t.equal(s.summary.content, 'Sunny.', 'the text chunks, not the outputs again')
      t.equal(s.summary.reasoning, 'Node LLM\n')
      t.ok(s.summary.done)
      t.ok(s.converter.finished())
      t.equal(s.converter.usage(), undefined)

      serve(difyEvents([{ event: 'workflow_finished', ...run, data: { id: 'run-1', status: 'succeeded', outputs: { city: 'Paris', temp: 21 } } }]))
      t.equal((await streamed(ctx, workflow, ask([{ role: 'user', content: 'Weather?' }], {}, true))).summary.content, '{"city":"Paris","temp":21}', 'outputs without a text key as JSON')

      serve({ task_id: 'task-1', workflow_run_id: 'run-2', data: { id: 'run-2', status: 'failed', outputs: null, error: 'Node LLM run failed: quota' } })
      const failedRun = await converted(ctx, workflow, ask([{ role: 'user', content: 'Weather?' }]))
      t.equal(failedRun.status, 500)
      t.match(failedRun.body, { error: { message: 'Node LLM run failed: quota', code: 'workflow_failed' } })
    })

    t.test('a completion app gets the query as an input', async (t) => {
      serve(chatAnswer('Done.'))
      const out = await converted(ctx, { ...channel, other: 'completion' }, ask([{ role: 'user', content: 'Summarize' }]))
      t.equal(up.last().url, '/v1/completion-messages')
      t.same(parsed(up.last().body), { inputs: { query: 'Summarize' }, response_mode: 'blocking', user: 'modelgate-channel-37' })
      t.match(out.body, { choices: [{ message: { content: 'Done.' } }], conversation_id: 'conv-1' })
    })

    t.test('a Dify conversation is continued with the last user turn; the client\'s user, images and a /v1 base URL', async (t) => {
      serve(chatAnswer('A cat.'))
      const messages = [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://img.test/cat.png' } }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }
      ]
      await converted(ctx, { ...channel, baseUrl: `${up.origin}/v1` }, ask(messages, { conversation_id: 'conv-1', user: 'alice' }))
      t.equal(up.last().url, '/v1/chat-messages', 'the /v1 is not doubled')
      t.match(parsed(up.last().body), {
        query: 'What is this?',
        conversation_id: 'conv-1',
        user: 'alice',
        files: [{ type: 'image', transfer_method: 'remote_url', url: 'https://img.test/cat.png' }]
      })
      t.equal((parsed(up.last().body).files as unknown[]).length, 1, 'data: URLs are not remote files')

      await converted(ctx, channel, ask(messages))
      t.equal(parsed(up.last().body).query, 'User: Hi\n\nAssistant: Hello!\n\nUser: What is this?', 'without a conversation id the turns are folded')
    })

    t.test('stream errors, moderation, files and zero usage', async (t) => {
      serve(difyEvents([
        { event: 'message', answer: 'Partial ' },
        { event: 'error', status: 400, code: 'completion_request_error', message: 'Rate limit reached for model' }
      ]))
      let s = await streamed(ctx, channel, ask([{ role: 'user', content: 'hi' }], {}, true))
      t.equal(s.summary.content, 'Partial ')
      t.ok(s.relayed.out.includes('"error":{"message":"Rate limit reached for model"'), 'an error after text reaches the client')
      t.notOk(s.converter.finished())

      serve(difyEvents([{ event: 'error', status: 400, code: 'provider_quota_exceeded', message: 'quota' }]))
      s = await streamed(ctx, channel, ask([{ role: 'user', content: 'hi' }], {}, true))
      t.equal(s.relayed.out + s.relayed.tail, '', 'an error before any text sends nothing (the relay may retry)')

      serve(difyEvents([
        { event: 'message', answer: 'Bad words' },
        { event: 'message_replace', answer: 'This content is not allowed.' },
        { event: 'message_file', id: 'file-1', type: 'image', belongs_to: 'assistant', url: 'https://files.test/chart.png' },
        messageEnd({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 })
      ]))
      s = await streamed(ctx, channel, ask([{ role: 'user', content: 'hi' }], {}, true))
      t.equal(s.summary.content, 'Bad wordsThis content is not allowed.\n![image](https://files.test/chart.png)\n')
      t.equal(s.summary.finish, 'content_filter')
      t.equal(s.summary.usage, undefined, 'zero usage is no usage')
      t.equal(s.converter.usage(), undefined)
      t.ok(s.summary.done)

      serve(difyEvents([{ event: 'message', answer: 'x' }, { event: 'error', status: 500, code: 'internal_server_error', message: 'boom' }]))
      const agentFailed = await converted(ctx, { ...channel, other: 'agent' }, ask([{ role: 'user', content: 'hi' }]))
      t.equal(agentFailed.status, 200, 'text before the error is kept')
      serve(difyEvents([{ event: 'error', status: 400, code: 'invalid_param', message: 'bad input' }]))
      const agentError = await converted(ctx, { ...channel, other: 'agent' }, ask([{ role: 'user', content: 'hi' }]))
      t.equal(agentError.status, 400)
      t.match(agentError.body, { error: { message: 'bad input', code: 'invalid_param' } })
    })

    t.test('the app mode and options from `other`; the conversation as one query', async (t) => {
      const read = (other: string) => difyOptions({ ...channel, other })
      t.same(read(''), { mode: 'chat', thoughts: false })
      t.same(read('Agent, thoughts'), { mode: 'agent', thoughts: true })
      t.same(read('workflow+thinking'), { mode: 'workflow', thoughts: true })
      t.same(read('advanced-chat'), { mode: 'chat', thoughts: false })
      t.same(read('completion something-else'), { mode: 'completion', thoughts: false })
      t.equal(foldedQuery([{ role: 'user', content: 'only' }]), 'only')
      t.equal(foldedQuery([{ role: 'developer', content: 'Rules' }, { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, { role: 'assistant', content: null, tool_calls: [] }]),
        'System: Rules\n\nUser: ab', 'developer as system, parts joined, empty turns left out')
      t.equal(foldedQuery([]), '')
    })

    t.test('lists no models and serves only chat', async (t) => {
      t.equal(ctx.adaptor.listModelsRequest(channel), undefined)
      t.same(ctx.adaptor.defaultModels, ['dify'])
      t.equal(ctx.adaptor.buildRequest({ ...channel, baseUrl: '' }, ask([])).url, 'https://api.dify.ai/v1/chat-messages')
      t.equal(MODEL, relayRequest('chat', {}).model)
    })
  }
}
