// Type 45: the ChatGPT backend's Codex endpoint (POST {base}/responses) with a ChatGPT plan's
// OAuth sign-in, as the Codex CLI calls it: bearer token, chatgpt-account-id, OpenAI-Beta,
// originator and session_id headers; a streamed Responses request with store: false,
// instructions, and no output cap or sampling settings; access tokens renewed at OpenAI's OAuth
// token endpoint with a rotating refresh token.
import type { Test } from 'tap'
import { CODEX_CLIENT_ID, DEFAULT_INSTRUCTIONS } from '../../src/codex/index.js'
import { CredentialError, type ChannelConfig, type RelayRequest } from '../../src/index.js'
import { bytesOf, MODEL, parsed, readChunks, relay, WEATHER_TOOL, type NativeContext, type NativeProtocol, type Seen } from '../kit.js'
import { authority, bearer, jwt } from './oauth-authority.js'
import { codexError, detail, responsesStream } from './responses-wire.js'

const ACCOUNT = 'acct-45-0f3e'
const CLAIM = 'https://api.openai.com/auth'
const TOKEN_PATH = '/oauth/token'
const inADay = () => Math.floor(Date.now() / 1000) + 86400
const ACCESS = jwt({ exp: inADay(), sub: 'user-45', [CLAIM]: { chatgpt_account_id: ACCOUNT, chatgpt_plan_type: 'pro' } })
/** Fields the backend refuses. */
const REFUSED_FIELDS = ['max_output_tokens', 'max_completion_tokens', 'max_tokens', 'temperature', 'top_p']

const AUTH = authority({
  path: TOKEN_PATH,
  checkBody: (body) => body.client_id !== CODEX_CLIENT_ID ? 'unknown client_id' : body.grant_type !== 'refresh_token' ? 'unsupported grant_type' : body.scope !== 'openid profile email' ? 'wrong scope' : undefined,
  issue: (n, exp) => jwt({ exp, n, sub: 'user-45', [CLAIM]: { chatgpt_account_id: ACCOUNT } }),
  extra: () => ({ id_token: jwt({ email: 'a@example.com', [CLAIM]: { chatgpt_account_id: ACCOUNT } }) }),
  // OpenAI's grants carry no expires_in: the access token's exp claim says when.
  expiresIn: false,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(codexError('invalid_request_error', 'Your refresh token has already been used to generate a new access token. Please try signing in again.', { code: 'refresh_token_reused' }))
  }
})

/** The access token of a channel's JSON key. */
const keyToken = (channel: ChannelConfig): string | undefined => {
  try {
    return (JSON.parse(channel.key) as { access_token?: string }).access_token
  } catch {
    return undefined
  }
}

/** What the backend checks: the token and account, the Codex CLI's headers, and the body's rules. */
function accepted (seen: Seen, channel: ChannelConfig): boolean {
  const token = bearer(seen)
  if (token !== keyToken(channel) && !AUTH.check(token)) return false
  const h = seen.headers
  if (h['chatgpt-account-id'] !== ACCOUNT || h['openai-beta'] !== 'responses=experimental' || h.originator !== 'codex_cli_rs' || typeof h.session_id !== 'string' || h.session_id === '') return false
  const body = parsed(seen.body)
  return body.store === false && body.stream === true && typeof body.instructions === 'string' && body.instructions !== '' &&
    Array.isArray(body.input) && REFUSED_FIELDS.every((name) => !(name in body))
}

/** The events of an SSE text: type and data. */
function events (text: string): Array<{ name: string, data: Record<string, unknown> }> {
  return text.split('\n\n').filter((e) => e !== '').map((e) => {
    const name = /^event: (.*)$/m.exec(e)?.[1] ?? ''
    const data = /^data: (.*)$/m.exec(e)?.[1] ?? '{}'
    return { name, data: JSON.parse(data) as Record<string, unknown> }
  })
}

const REASONING_USAGE = { input_tokens: 20, input_tokens_details: { cached_tokens: 8 }, output_tokens: 15, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 35 }

async function extra (t: Test, ctx: NativeContext): Promise<void> {
  const { up, adaptor, serve } = ctx
  const convert = async (req: RelayRequest, res: Response) => adaptor.convertResponse(ctx.channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))

  t.test('Responses clients: the backend\'s rules applied, a non-streamed answer assembled from the stream', async (t) => {
    serve(responsesStream([{ kind: 'reasoning', pieces: ['Thinking.'] }, { kind: 'text', pieces: ['Hello ', 'there'] }], { usage: REASONING_USAGE }))
    const req: RelayRequest = {
      endpoint: 'responses',
      format: 'openai',
      model: MODEL,
      stream: false,
      body: { model: 'alias', input: 'hi', instructions: 'Be brief.', max_output_tokens: 100, temperature: 0.2, top_p: 0.9, store: true, reasoning: { effort: 'high' }, prompt_cache_key: 'conv-1', include: ['reasoning.encrypted_content'] }
    }
    const res = await ctx.send(req)
    t.equal(res.status, 200)
    const seen = up.last()
    t.equal(seen.url, '/responses')
    t.equal(seen.headers.session_id, 'conv-1', 'the client\'s cache key groups the conversation')
    t.equal(seen.headers.accept, 'text/event-stream')
    t.same(parsed(seen.body), {
      model: MODEL,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      instructions: 'Be brief.',
      store: false,
      stream: true,
      reasoning: { effort: 'high' },
      prompt_cache_key: 'conv-1',
      include: ['reasoning.encrypted_content']
    }, 'refused fields dropped, store off, streamed')
    const converted = await convert(req, res)
    t.equal(converted.status, 200)
    const answer = parsed(Buffer.from(converted.body))
    t.match(answer, { id: 'resp_1', object: 'response', status: 'completed', usage: REASONING_USAGE })
    t.match(answer.output, [
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking.' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there' }] }
    ], 'the streamed items fill the empty output of response.completed')
    t.same(converted.usage, { promptTokens: 20, completionTokens: 15, cachedTokens: 8 }, 'reasoning is a part of the completion')
    t.equal(converted.text, 'Thinking.Hello there')

    serve(responsesStream([{ kind: 'text', pieces: ['ok'] }]))
    await ctx.send({ ...req, body: { input: [{ role: 'user', content: 'hi' }] } })
    t.equal(parsed(up.last().body).instructions, DEFAULT_INSTRUCTIONS, 'instructions the backend requires')
    await ctx.send({ ...req, body: { input: [{ role: 'user', content: 'hi' }] } }, { ...ctx.channel, setting: { ...ctx.channel.setting, instructions: 'You are a coding agent.' } })
    t.equal(parsed(up.last().body).instructions, 'You are a coding agent.', 'or the channel\'s own')
  })

  t.test('Responses clients: the stream relayed, its final event given the streamed items', async (t) => {
    const upstream = responsesStream([{ kind: 'text', pieces: ['Héllo, ', 'wörld'] }], { usage: REASONING_USAGE })
    serve(upstream)
    const req: RelayRequest = { endpoint: 'responses', format: 'openai', model: MODEL, stream: true, body: { input: 'hi', stream: true } }
    const converter = adaptor.createStream(ctx.channel, req)
    const relayed = await relay(await ctx.send(req), converter)
    t.equal(relayed.error, undefined)
    const got = events(relayed.out + relayed.tail)
    const sent = events(upstream)
    t.same(got.map((e) => e.name), sent.map((e) => e.name), 'every event, in order')
    t.same(got.slice(0, -1).map((e) => e.data), sent.slice(0, -1).map((e) => e.data), 'as the backend sent them')
    t.match(got.at(-1)?.data, { type: 'response.completed', response: { status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'Héllo, wörld' }] }], usage: REASONING_USAGE } })
    t.ok(converter.finished())
    t.equal(relayed.finishedAfter.indexOf(true), relayed.finishedAfter.length - 1, 'finished only at the end')
    t.same(converter.usage(), { promptTokens: 20, completionTokens: 15, cachedTokens: 8 })
    t.equal(relayed.text, 'Héllo, wörld')

    // A stream cut before response.completed: not finished, no usage.
    up.answer(async (res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      res.end(upstream.slice(0, upstream.indexOf('event: response.completed')))
    })
    const cut = adaptor.createStream(ctx.channel, req)
    await relay(await ctx.send(req), cut)
    t.notOk(cut.finished())
    t.equal(cut.usage(), undefined)
  })

  t.test('chat clients: reasoning as reasoning_content, reasoning tokens in the usage, options mapped', async (t) => {
    serve(responsesStream([{ kind: 'reasoning', pieces: ['Let me ', 'think.'] }, { kind: 'text', pieces: ['Hi'] }], { usage: REASONING_USAGE }))
    const body = {
      messages: [{ role: 'user', content: 'hi' }],
      reasoning_effort: 'high',
      max_tokens: 50,
      max_completion_tokens: 50,
      temperature: 0.3,
      top_p: 0.5,
      stop: ['\n'],
      n: 1,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      stream: true,
      stream_options: { include_usage: true }
    }
    const req: RelayRequest = { endpoint: 'chat', format: 'openai', model: MODEL, stream: true, body }
    const converter = adaptor.createStream(ctx.channel, req)
    const relayed = await relay(await ctx.send(req), converter)
    const sent = parsed(up.last().body)
    t.same(sent, {
      model: MODEL,
      instructions: DEFAULT_INSTRUCTIONS,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      store: false,
      stream: true,
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } }
    }, 'no output cap, sampling, stop or n: the backend refuses them')
    const summary = readChunks(relayed.out + relayed.tail)
    t.equal(summary.reasoning, 'Let me think.')
    t.equal(summary.content, 'Hi')
    t.equal(summary.finish, 'stop')
    t.same(summary.usage, { prompt_tokens: 20, completion_tokens: 15, total_tokens: 35, prompt_tokens_details: { cached_tokens: 8 }, completion_tokens_details: { reasoning_tokens: 5 } })
    t.ok(summary.done)
    t.same(converter.usage(), { promptTokens: 20, completionTokens: 15, cachedTokens: 8 })

    // An answer cut short by the output budget.
    serve(responsesStream([{ kind: 'text', pieces: ['Hel'] }], { status: 'incomplete' }))
    const plain: RelayRequest = { endpoint: 'chat', format: 'openai', model: MODEL, stream: false, body: { messages: [{ role: 'user', content: 'hi' }] } }
    const converted = await convert(plain, await ctx.send(plain))
    t.match(parsed(Buffer.from(converted.body)), { choices: [{ message: { content: 'Hel' }, finish_reason: 'length' }] })
    t.same(converted.usage, { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })
  })

  t.test('chat clients: a tool loop, images, and the channel\'s own instructions', async (t) => {
    serve(responsesStream([{ kind: 'text', pieces: ['Sunny.'] }]))
    const channel = { ...ctx.channel, setting: { ...ctx.channel.setting, instructions: 'You are a coding agent.' } }
    const req: RelayRequest = {
      endpoint: 'chat',
      format: 'openai',
      model: MODEL,
      stream: false,
      body: {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Weather here?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"sky":"clear"}' }
        ],
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        parallel_tool_calls: false
      }
    }
    const converted = await convert(req, await ctx.send(req, channel))
    t.match(parsed(Buffer.from(converted.body)), { object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'Sunny.' }, finish_reason: 'stop' }] })
    t.match(parsed(up.last().body), {
      instructions: 'You are a coding agent.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Be brief.' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather here?' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"sky":"clear"}' }
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false
    })
  })

  t.test('a failed answer: nothing streamed (another channel can be tried), an error for the non-streamed client', async (t) => {
    serve(responsesStream([], { status: 'failed' }))
    const streamed: RelayRequest = { endpoint: 'chat', format: 'openai', model: MODEL, stream: true, body: { messages: [{ role: 'user', content: 'hi' }] } }
    const converter = adaptor.createStream(ctx.channel, streamed)
    const relayed = await relay(await ctx.send(streamed), converter)
    t.equal(relayed.out + relayed.tail, '', 'nothing sent')
    t.notOk(converter.finished())
    const plain = { ...streamed, stream: false }
    const converted = await convert(plain, await ctx.send(plain))
    t.equal(converted.status, 502)
    t.same(converted.failure, { action: 'retry', message: 'The model failed to answer.', code: 'server_error' }, 'retried on another channel, as a refusal')
    t.match(parsed(Buffer.from(converted.body)), { error: { message: 'The model failed to answer.', code: 'server_error' } })
    t.equal(converted.usage, undefined)
  })

  t.test('the CLI\'s auth.json as the key: one renewal for concurrent requests, the account from the id token, no expired token sent', async (t) => {
    AUTH.live('rt-45-a')
    const stale = jwt({ exp: Math.floor(Date.now() / 1000) - 60, [CLAIM]: { chatgpt_account_id: ACCOUNT } })
    AUTH.allow(stale, Date.now() - 60_000)
    AUTH.lifetime = 60
    const before = AUTH.exchanges.length
    const channel: ChannelConfig = {
      ...ctx.channel,
      key: JSON.stringify({
        OPENAI_API_KEY: null,
        tokens: { id_token: jwt({ email: 'a@example.com', [CLAIM]: { chatgpt_account_id: ACCOUNT } }), access_token: stale, refresh_token: 'rt-45-a' },
        last_refresh: '2026-01-01T00:00:00Z'
      })
    }
    serve(responsesStream([{ kind: 'text', pieces: ['Hello there'] }]))
    const plain: RelayRequest = { endpoint: 'chat', format: 'openai', model: MODEL, stream: false, body: { messages: [{ role: 'user', content: 'hi' }] } }
    const seenBefore = up.seen.length
    const answers = await Promise.all(Array.from({ length: 5 }, async () => await ctx.send(plain, channel)))
    t.same(answers.map((r) => r.status), [200, 200, 200, 200, 200])
    const exchanges = AUTH.exchanges.slice(before)
    t.equal(exchanges.length, 1, 'one token request for five concurrent requests')
    t.match(exchanges[0], { contentType: /^application\/json/, granted: true, body: { client_id: CODEX_CLIENT_ID, grant_type: 'refresh_token', refresh_token: 'rt-45-a', scope: 'openid profile email' } })
    const issued = AUTH.lastAccess()
    const api = up.seen.slice(seenBefore).filter((s) => s.url !== TOKEN_PATH)
    t.ok(api.length === 5 && api.every((s) => s.headers.authorization === `Bearer ${String(issued)}` && s.headers['chatgpt-account-id'] === ACCOUNT))
    t.same(AUTH.expiredSent, [], 'the expired token never reached the backend')

    // The grant's exp claim is within the renewal margin: the next request renews, with the rotated refresh token.
    const rotated = AUTH.lastRefresh()
    t.equal((await ctx.send(plain, channel)).status, 200)
    t.equal(AUTH.exchanges.at(-1)?.body.refresh_token, rotated)
    t.equal(AUTH.exchanges.length, before + 2)

    // The refresh token the channel holds was used: the endpoint refuses it (as after a restart).
    AUTH.live('rt-45-b')
    const reused = { ...channel, key: JSON.stringify({ refresh_token: 'rt-45-used', account_id: ACCOUNT }) }
    const err = await ctx.send(plain, reused).then(() => undefined, (e: unknown) => e)
    t.type(err, CredentialError)
    t.match(err, { action: 'disable', status: 401, message: /refresh_token_reused/ })
  })

  t.test('an account id is required', async (t) => {
    const err = await ctx.send({ endpoint: 'chat', format: 'openai', model: MODEL, stream: false, body: { messages: [] } }, { ...ctx.channel, key: JSON.stringify({ access_token: 'opaque-token' }) }).then(() => undefined, (e: unknown) => e)
    t.match(err, { action: 'disable', message: /account/ })
  })

  t.test('a spent usage window retries elsewhere and says when it resets', async (t) => {
    const failure = adaptor.classifyFailure(429, codexError('usage_limit_reached', 'The usage limit has been reached', { plan_type: 'plus', resets_at: 1777936568, resets_in_seconds: 13872 }))
    t.match(failure, { action: 'retry', code: 'usage_limit_reached', message: 'The usage limit has been reached (it resets in 3 h 51 min)' })
  })
}

export const fixture: NativeProtocol = {
  channel: (origin) => ({
    id: 45,
    type: 45,
    key: JSON.stringify({ access_token: ACCESS, refresh_token: 'rt-45-main', account_id: ACCOUNT }),
    baseUrl: origin,
    other: '',
    organization: null,
    setting: { token_url: `${origin}${TOKEN_PATH}` }
  }),
  wrongKey: JSON.stringify({ access_token: jwt({ exp: inADay(), sub: 'someone-else' }), account_id: ACCOUNT }),
  authorized: accepted,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(codexError('invalid_request_error', 'Your authentication token has been invalidated. Please try signing in again.', { code: 'token_invalidated' }))
  },
  auxiliary: (res, seen) => AUTH.serve(res, seen),
  chat: {
    path: () => '/responses',
    answer: responsesStream([{ kind: 'text', pieces: ['Hello there'] }]),
    stream: () => responsesStream([{ kind: 'text', pieces: ['Héllo, ', 'wörld 你好 🎉'] }]),
    tools: {
      answer: responsesStream([{ kind: 'call', callId: 'call_1', name: 'get_weather', pieces: ['{"city":"Paris"}'] }]),
      stream: () => responsesStream([{ kind: 'call', callId: 'call_1', name: 'get_weather', pieces: ['{"city": ', '"Paris"}'] }])
    },
    checkBody: (t, body, seen) => {
      t.equal(body.model, MODEL)
      t.equal(body.instructions, 'Be brief.', 'the system prompt as instructions')
      t.same(body.input, [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] }])
      t.same(body.tools, [{ type: 'function', name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }])
      t.equal(body.store, false)
      t.equal(body.stream, true, 'always streamed: the backend refuses anything else')
      t.equal(seen.headers.authorization, `Bearer ${ACCESS}`)
      t.equal(seen.headers['chatgpt-account-id'], ACCOUNT)
      t.equal(seen.headers['openai-beta'], 'responses=experimental')
      t.equal(seen.headers.originator, 'codex_cli_rs')
      t.match(seen.headers.session_id, /^[0-9a-f-]{36}$/)
    }
  },
  endpoints: ['responses'],
  errors: [
    { what: '401 invalidated sign-in', status: 401, body: codexError('invalid_request_error', 'Your authentication token has been invalidated. Please try signing in again.', { code: 'token_invalidated' }), action: 'disable', code: 'token_invalidated' },
    { what: '429 usage window spent', status: 429, body: codexError('usage_limit_reached', 'The usage limit has been reached', { plan_type: 'plus', resets_at: 1777936568, resets_in_seconds: 13872 }), action: 'retry', code: 'usage_limit_reached' },
    { what: '429 plan without Codex', status: 429, body: codexError('usage_not_included', 'To use Codex with your ChatGPT plan, upgrade to Plus.'), action: 'disable', code: 'usage_not_included' },
    { what: '429 rate limit', status: 429, body: codexError('rate_limit_exceeded', 'Rate limit reached. Please try again later.'), action: 'retry', code: 'rate_limit_exceeded' },
    { what: '400 unsupported parameter', status: 400, body: detail('Unsupported parameter: max_output_tokens'), action: 'client' },
    { what: '400 unknown model', status: 400, body: detail("The 'gpt-9' model is not supported when using Codex with a ChatGPT account."), action: 'client' },
    { what: '500 server error', status: 500, body: codexError('server_error', 'An error occurred while processing your request.'), action: 'retry', code: 'server_error' },
    { what: '503 overloaded', status: 503, body: detail('Service Unavailable'), action: 'retry' }
  ],
  extra
}
