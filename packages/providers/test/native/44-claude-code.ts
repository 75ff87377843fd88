// Type 44: Anthropic's Messages API with a Claude subscription's OAuth sign-in, as Claude Code
// calls it: a bearer token (no x-api-key), the oauth beta flag, Claude Code's identity as the
// first system block; access tokens renewed at the OAuth token endpoint with a refresh token.
import type { Test } from 'tap'
import { CLAUDE_CODE_CLIENT_ID } from '../../src/claude-code/index.js'
import { CredentialError, type ChannelConfig, type RelayRequest } from '../../src/index.js'
import { bytesOf, MODEL, parsed, relay, type NativeContext, type NativeProtocol, type Seen } from '../kit.js'
import { anthropicError, anthropicMessage, anthropicStream } from './anthropic-wire.js'
import { authority, bearer } from './oauth-authority.js'

const KEY = 'sk-ant-oat01-test-44'
const PREFIX = "You are Claude Code, Anthropic's official CLI for Claude."
const TOKEN_PATH = '/v1/oauth/token'

const AUTH = authority({
  path: TOKEN_PATH,
  checkBody: (body) => body.grant_type !== 'refresh_token' ? 'unsupported grant_type' : body.client_id !== CLAUDE_CODE_CLIENT_ID ? 'unknown client_id' : undefined,
  issue: (n) => `sk-ant-oat01-issued-${n}`,
  expiresIn: true,
  refuse: (res) => {
    res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant', error_description: 'Refresh token not found or invalid' }))
  }
})

const betas = (seen: Seen): string[] => String(seen.headers['anthropic-beta'] ?? '').split(',')

/** What Anthropic checks of a Claude Code request: the token, the oauth beta flag, no API key, and (messages) the identity block. */
function accepted (seen: Seen, channel: ChannelConfig): boolean {
  const token = bearer(seen)
  if (token !== channel.key && !AUTH.check(token)) return false
  if (!betas(seen).includes('oauth-2025-04-20') || seen.headers['x-api-key'] !== undefined || seen.headers['anthropic-version'] === undefined) return false
  if (seen.method !== 'POST') return true
  const system = (parsed(seen.body).system ?? []) as Array<{ text?: string }>
  return Array.isArray(system) && system[0]?.text === PREFIX
}

const chatRequest = (content = 'hi'): RelayRequest => ({ endpoint: 'chat', format: 'openai', model: MODEL, stream: false, body: { messages: [{ role: 'user', content }] } })

async function extra (t: Test, ctx: NativeContext): Promise<void> {
  const { up, adaptor, serve } = ctx
  const tokenUrl = `${up.origin}${TOKEN_PATH}`

  t.test('Anthropic clients pass through with Claude Code\'s identity and beta flags added', async (t) => {
    serve(anthropicMessage([{ type: 'text', text: 'Hello there' }], 'end_turn'))
    const req: RelayRequest = {
      endpoint: 'messages',
      format: 'anthropic',
      model: MODEL,
      stream: false,
      body: { model: 'alias', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: 'u1' } },
      headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14, oauth-2025-04-20', 'anthropic-version': '2023-06-01' }
    }
    const res = await ctx.send(req)
    t.equal(res.status, 200)
    const seen = up.last()
    t.equal(seen.url, '/v1/messages?beta=true')
    t.equal(seen.headers.authorization, `Bearer ${KEY}`)
    t.equal(seen.headers['x-api-key'], undefined)
    t.same(betas(seen), ['claude-code-20250219', 'oauth-2025-04-20', 'interleaved-thinking-2025-05-14'], 'the client\'s flags merged, none twice')
    t.same(parsed(seen.body), {
      model: MODEL, max_tokens: 100, metadata: { user_id: 'u1' }, messages: [{ role: 'user', content: 'hi' }],
      system: [{ type: 'text', text: PREFIX }, { type: 'text', text: 'Be brief.' }]
    }, 'the body as written, the identity block first')
    const converted = adaptor.convertResponse(ctx.channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
    t.same(converted.usage, { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })

    // Claude Code's own request already opens with its identity: nothing is added.
    const own = [{ type: 'text', text: PREFIX, cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'You are an interactive CLI tool.' }]
    serve(anthropicStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Hi' }] }], 'end_turn'))
    const streamed: RelayRequest = { ...req, stream: true, body: { model: 'alias', max_tokens: 100, stream: true, system: own, messages: [{ role: 'user', content: 'hi' }] } }
    const converter = adaptor.createStream(ctx.channel, streamed)
    const relayed = await relay(await ctx.send(streamed), converter)
    t.same(parsed(up.last().body).system, own, 'the system prompt untouched')
    t.match(relayed.out, /event: message_stop/, 'the stream passes through')
    t.same(converter.usage(), { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })
  })

  t.test('a refresh token renews the access token once for concurrent requests; no expired token is sent', async (t) => {
    AUTH.live('sk-ant-ort01-a')
    AUTH.allow('sk-ant-oat01-stale', Date.now() - 1000)
    // Grants that live less than the renewal margin (five minutes): every later request renews.
    AUTH.lifetime = 60
    const before = AUTH.exchanges.length
    // The CLI's own credential file, pasted as the key.
    const channel: ChannelConfig = {
      ...ctx.channel,
      key: JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-stale', refreshToken: 'sk-ant-ort01-a', expiresAt: Date.now() - 1000, scopes: ['user:inference'], subscriptionType: 'max' } }),
      setting: { token_url: tokenUrl }
    }
    serve(anthropicMessage([{ type: 'text', text: 'Hello there' }], 'end_turn'))
    const seenBefore = up.seen.length
    const answers = await Promise.all(Array.from({ length: 6 }, async () => await ctx.send(chatRequest(), channel)))
    t.same(answers.map((r) => r.status), [200, 200, 200, 200, 200, 200])
    const exchanges = AUTH.exchanges.slice(before)
    t.equal(exchanges.length, 1, 'one token request for six concurrent requests')
    t.match(exchanges[0], { contentType: /^application\/json/, granted: true, body: { grant_type: 'refresh_token', refresh_token: 'sk-ant-ort01-a', client_id: CLAUDE_CODE_CLIENT_ID } })
    const api = up.seen.slice(seenBefore).filter((s) => s.url !== TOKEN_PATH)
    t.equal(api.length, 6)
    t.ok(api.every((s) => s.headers.authorization === 'Bearer sk-ant-oat01-issued-1'), 'every request carries the renewed token')
    t.same(AUTH.expiredSent, [], 'the expired token never reached the API')

    // Each renewal uses the refresh token the previous one granted (the endpoint takes each once).
    const first = AUTH.lastRefresh()
    t.equal((await ctx.send(chatRequest(), channel)).status, 200)
    const second = AUTH.lastRefresh()
    t.equal((await ctx.send(chatRequest(), channel)).status, 200)
    const later = AUTH.exchanges.slice(before + 1)
    t.equal(later.length, 2, 'renewed before each request')
    t.same(later.map((e) => e.body.refresh_token), [first, second], 'the rotated refresh tokens, in turn')
    t.ok(later.every((e) => e.granted))
    t.equal(up.last().headers.authorization, 'Bearer sk-ant-oat01-issued-3')
    t.same(AUTH.expiredSent, [])
  })

  t.test('credentials in the setting; a held token is used until its renewal margin', async (t) => {
    AUTH.live('sk-ant-ort01-b')
    AUTH.allow('sk-ant-oat01-held', Date.now() + 3600_000)
    const before = AUTH.exchanges.length
    const channel: ChannelConfig = {
      ...ctx.channel,
      key: 'placeholder',
      setting: { access_token: 'sk-ant-oat01-held', refresh_token: 'sk-ant-ort01-b', expires_at: Math.floor(Date.now() / 1000) + 3600, token_url: tokenUrl }
    }
    serve(anthropicMessage([{ type: 'text', text: 'Hello there' }], 'end_turn'))
    t.equal((await ctx.send(chatRequest(), channel)).status, 200)
    t.equal(up.last().headers.authorization, 'Bearer sk-ant-oat01-held')
    t.equal(AUTH.exchanges.length, before, 'no renewal while the held token has an hour left')

    // Within the margin (five minutes): renewed before it is sent.
    AUTH.live('sk-ant-ort01-c')
    AUTH.lifetime = 8 * 3600
    const soon = { ...channel, setting: { ...channel.setting, access_token: 'sk-ant-oat01-soon', refresh_token: 'sk-ant-ort01-c', expires_at: Date.now() + 60_000 } }
    t.equal((await ctx.send(chatRequest(), soon)).status, 200)
    t.match(up.last().headers.authorization, /^Bearer sk-ant-oat01-issued-/)
    t.equal(AUTH.exchanges.length, before + 1)
  })

  t.test('refusals while renewing', async (t) => {
    const refused = async (channel: ChannelConfig): Promise<CredentialError> => {
      const seen = up.seen.length
      try {
        await ctx.send(chatRequest(), channel)
      } catch (err) {
        t.equal(up.seen.slice(seen).filter((s) => s.url !== TOKEN_PATH).length, 0, 'nothing reached the API')
        return err as CredentialError
      }
      throw new Error('not refused')
    }
    const wrong = await refused({ ...ctx.channel, key: JSON.stringify({ refresh_token: 'sk-ant-ort01-unknown' }), setting: { token_url: tokenUrl } })
    t.type(wrong, CredentialError)
    t.match(wrong, { action: 'disable', status: 400, message: /invalid_grant/ })
    t.notMatch(wrong.message, /ort01/, 'the refresh token is not in the message')

    AUTH.live('sk-ant-ort01-d')
    AUTH.failNext = 503
    const down = await refused({ ...ctx.channel, key: JSON.stringify({ refresh_token: 'sk-ant-ort01-d' }), setting: { token_url: tokenUrl } })
    t.match(down, { action: 'retry', status: 503 })

    const lapsed = await refused({ ...ctx.channel, key: 'sk-ant-oat01-lapsed', setting: { expires_at: Math.floor(Date.now() / 1000) - 60 } })
    t.match(lapsed, { action: 'disable', message: /expired/ })
    t.match(await refused({ ...ctx.channel, key: '{"expiresAt": 1}' }), { action: 'disable' })
  })
}

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 44, type: 44, key: KEY, baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'sk-ant-oat01-wrong',
  authorized: accepted,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(anthropicError('authentication_error', 'Invalid bearer token'))
  },
  auxiliary: (res, seen) => AUTH.serve(res, seen),
  chat: {
    path: () => '/v1/messages?beta=true',
    answer: anthropicMessage([{ type: 'text', text: 'Hello there' }], 'end_turn'),
    stream: () => anthropicStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Héllo, ' }, { type: 'text_delta', text: 'wörld 你好 🎉' }] }], 'end_turn'),
    tools: {
      answer: anthropicMessage([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }], 'tool_use'),
      stream: () => anthropicStream([{
        start: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} },
        deltas: [{ type: 'input_json_delta', partial_json: '{"city": ' }, { type: 'input_json_delta', partial_json: '"Paris"}' }]
      }], 'tool_use')
    },
    checkBody: (t, body, seen) => {
      t.same(body.system, [{ type: 'text', text: PREFIX }, { type: 'text', text: 'Be brief.' }], 'Claude Code\'s identity first, then the client\'s system prompt')
      t.same(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }], 'messages')
      t.same(body.tools, [{ name: 'get_weather', description: 'Current weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }], 'tools')
      t.equal(body.max_tokens, 4096)
      t.equal(seen.headers.authorization, `Bearer ${KEY}`)
      t.same(betas(seen), ['claude-code-20250219', 'oauth-2025-04-20'])
      t.equal(seen.headers['x-api-key'], undefined, 'no API key header')
    }
  },
  models: {
    path: '/v1/models?limit=1000',
    answer: { data: [{ type: 'model', id: 'model-a', display_name: 'Model A', created_at: '2025-05-14T00:00:00Z' }, { type: 'model', id: 'model-b', display_name: 'Model B', created_at: '2025-05-14T00:00:00Z' }], has_more: false, first_id: 'model-a', last_id: 'model-b' }
  },
  errors: [
    { what: '401 expired token', status: 401, body: anthropicError('authentication_error', 'OAuth token has expired. Please obtain a new token or refresh your existing token.'), action: 'disable', code: 'authentication_error' },
    { what: '403 OAuth not allowed', status: 403, body: anthropicError('permission_error', 'OAuth authentication is currently not supported.'), action: 'disable', code: 'permission_error' },
    { what: '400 not Claude Code', status: 400, body: anthropicError('invalid_request_error', 'This credential is only authorized for use with Claude Code and cannot be used for other API requests.'), action: 'disable', code: 'invalid_request_error' },
    { what: '429 subscription limit', status: 429, body: anthropicError('rate_limit_error', 'This request would exceed your account\'s rate limit. Please try again later.'), action: 'retry', code: 'rate_limit_error' },
    { what: '529 overloaded', status: 529, body: anthropicError('overloaded_error', 'Overloaded'), action: 'retry', code: 'overloaded_error' },
    { what: '400 bad request', status: 400, body: anthropicError('invalid_request_error', 'messages: roles must alternate between "user" and "assistant"'), action: 'client', code: 'invalid_request_error' },
    { what: '404 unknown model', status: 404, body: anthropicError('not_found_error', 'model: claude-9'), action: 'client', code: 'not_found_error' }
  ],
  extra
}
