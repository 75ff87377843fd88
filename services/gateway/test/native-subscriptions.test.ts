// Subscription channels through the running gateway: Claude Code (type 44, a Claude plan's
// OAuth sign-in on Anthropic's Messages API) and Codex (type 45, a ChatGPT plan's sign-in on the
// ChatGPT backend's Codex Responses endpoint), each against a local server that checks what
// the real one checks (bearer token, beta and CLI headers, Claude Code's identity block, the
// backend's body rules) and renews tokens at its own OAuth endpoint.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import t, { type Test } from 'tap'
import { clearTokenCache } from '@modelgate/providers'
import { Redis } from 'ioredis'
import { box, buildGateway, reload, secondGateway, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

const PREFIX = "You are Claude Code, Anthropic's official CLI for Claude."
const CLAIM = 'https://api.openai.com/auth'
const ACCOUNT = 'acct-gw-45'
const CLAUDE_USAGE = { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 30, output_tokens: 7 }
const CODEX_USAGE = { input_tokens: 40, input_tokens_details: { cached_tokens: 16 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 49 }

interface Request {
  path: string
  headers: IncomingHttpHeaders
  body: Record<string, unknown>
}

interface Subscriptions {
  url: string
  /** Messages and Responses requests (token requests apart). */
  requests: Request[]
  /** Token requests: the refresh token each used. */
  refreshes: string[]
}

function jwt (claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.c2ln`
}

const CODEX_TOKEN = jwt({ exp: Math.floor(Date.now() / 1000) + 86400, [CLAIM]: { chatgpt_account_id: ACCOUNT } })

/** Anthropic (Claude Code sign-in) and the ChatGPT Codex backend on one local server. */
async function fakeSubscriptions (t: Test): Promise<Subscriptions> {
  const fake: Subscriptions = { url: '', requests: [], refreshes: [] }
  const liveRefresh = new Set(['sk-ant-ort01-gw'])
  const claudeTokens = new Set<string>()
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = req.url ?? ''
      const body = (() => { try { return JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown> } catch { return {} } })()
      if (url === '/v1/oauth/token') {
        // Anthropic's token endpoint: each refresh token works once.
        const used = String(body['refresh_token'])
        fake.refreshes.push(used)
        if (body['grant_type'] !== 'refresh_token' || !liveRefresh.delete(used)) return send(res, 400, { error: 'invalid_grant' })
        const token = `sk-ant-oat01-fresh-${fake.refreshes.length}`
        claudeTokens.add(token)
        liveRefresh.add(`sk-ant-ort01-next-${fake.refreshes.length}`)
        return setTimeout(() => send(res, 200, { token_type: 'Bearer', access_token: token, refresh_token: `sk-ant-ort01-next-${fake.refreshes.length}`, expires_in: 28800 }), 20)
      }
      fake.requests.push({ path: url, headers: req.headers, body })
      if (url.startsWith('/v1/messages')) {
        const auth = req.headers.authorization ?? ''
        const betas = String(req.headers['anthropic-beta'] ?? '').split(',')
        if (!claudeTokens.has(auth.replace(/^Bearer /, '')) || req.headers['x-api-key'] !== undefined || !betas.includes('oauth-2025-04-20')) {
          return send(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'Invalid bearer token' } })
        }
        const system = body['system'] as Array<{ text?: string }> | undefined
        if (!Array.isArray(system) || system[0]?.text !== PREFIX) {
          return send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'This credential is only authorized for use with Claude Code and cannot be used for other API requests.' } })
        }
        const model = String(body['model'])
        if (body['stream'] !== true) {
          return send(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'Hello from Claude' }], stop_reason: 'end_turn', stop_sequence: null, usage: CLAUDE_USAGE })
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        const ev = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
        ev('message_start', { message: { id: 'msg_2', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...CLAUDE_USAGE, output_tokens: 1 } } })
        ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
        for (const piece of ['Hello ', 'from ', 'Claude']) ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } })
        ev('content_block_stop', { index: 0 })
        ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } })
        ev('message_stop', {})
        res.end()
        return
      }
      if (url === '/codex/responses') {
        const h = req.headers
        if (h.authorization !== `Bearer ${CODEX_TOKEN}` || h['chatgpt-account-id'] !== ACCOUNT) return send(res, 401, { detail: 'Unauthorized' })
        if (h['openai-beta'] !== 'responses=experimental' || h.originator !== 'codex_cli_rs' || typeof h.session_id !== 'string') return send(res, 400, { detail: 'Bad headers' })
        if (body['store'] !== false) return send(res, 400, { detail: 'Store must be set to false' })
        if (body['stream'] !== true) return send(res, 400, { detail: 'Stream must be set to true' })
        if (typeof body['instructions'] !== 'string') return send(res, 400, { detail: 'Instructions are required' })
        for (const name of ['max_output_tokens', 'temperature']) if (name in body) return send(res, 400, { detail: `Unsupported parameter: ${name}` })
        const shell = (status: string, usage: unknown) => ({ id: 'resp_gw', object: 'response', created_at: 1700000000, status, model: String(body['model']), output: [], usage })
        const item = { id: 'msg_0', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello from Codex', annotations: [] }] }
        const events: Array<Record<string, unknown>> = [
          { type: 'response.created', response: shell('in_progress', null) },
          { type: 'response.in_progress', response: shell('in_progress', null) },
          { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } },
          { type: 'response.content_part.added', item_id: 'msg_0', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
          ...['Hello ', 'from ', 'Codex'].map((delta) => ({ type: 'response.output_text.delta', item_id: 'msg_0', output_index: 0, content_index: 0, delta, logprobs: [] })),
          { type: 'response.output_text.done', item_id: 'msg_0', output_index: 0, content_index: 0, text: 'Hello from Codex', logprobs: [] },
          { type: 'response.content_part.done', item_id: 'msg_0', output_index: 0, content_index: 0, part: item.content[0] },
          { type: 'response.output_item.done', output_index: 0, item },
          // As the backend does with store: false, the final event's output is empty.
          { type: 'response.completed', response: shell('completed', CODEX_USAGE) }
        ]
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.end(events.map((e, i) => `event: ${String(e['type'])}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`).join(''))
        return
      }
      send(res, 404, { detail: 'Not Found' })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return fake
}

t.test('a Claude Code channel: Anthropic clients pass through with the identity block, OpenAI clients are converted, tokens renewed once', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeSubscriptions(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values([
    { key: 'ModelRatio', value: JSON.stringify({ 'claude-sonnet-4-6': 1.5 }) },
    { key: 'CompletionRatio', value: JSON.stringify({ 'claude-sonnet-4-6': 5 }) }
  ]).execute()
  const credentials = { accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-gw', expiresAt: Date.now() - 60_000 }
  const ch = await seedChannel(app.db, { type: 44, baseUrl: upstream.url, key: JSON.stringify({ claudeAiOauth: credentials }), models: ['claude-sonnet-4-6'] })
  await app.db.updateTable('channels').set({ setting: JSON.stringify({ token_url: `${upstream.url}/v1/oauth/token` }) }).where('id', '=', ch.id).execute()
  await reload(app)

  const anthropic = new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } })
  const message = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] })
  t.match(message, { type: 'message', stop_reason: 'end_turn', content: [{ type: 'text', text: 'Hello from Claude' }] })
  const first = upstream.requests[0]!
  t.equal(first.path, '/v1/messages?beta=true')
  t.equal(first.headers.authorization, 'Bearer sk-ant-oat01-fresh-1', 'the renewed token, never the expired one')
  t.equal(first.headers['x-api-key'], undefined)
  t.same(String(first.headers['anthropic-beta']).split(','), ['claude-code-20250219', 'oauth-2025-04-20', 'interleaved-thinking-2025-05-14'])
  t.same(first.body, {
    model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }],
    system: [{ type: 'text', text: PREFIX }, { type: 'text', text: 'Be brief.' }]
  }, 'the client\'s body, the identity block first')

  const deltas: string[] = []
  const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'count' }] })
  stream.on('text', (text) => { deltas.push(text) })
  const final = await stream.finalMessage()
  t.same(deltas, ['Hello ', 'from ', 'Claude'])
  t.equal(final.usage.output_tokens, 7)
  t.same((upstream.requests[1]!.body['system'] as unknown[])[0], { type: 'text', text: PREFIX })

  const openai = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const chat = await openai.chat.completions.create({ model: 'claude-sonnet-4-6', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] })
  t.equal(chat.choices[0]?.message.content, 'Hello from Claude')
  t.match(chat.usage, { prompt_tokens: 150, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 100 } })
  t.match(upstream.requests[2]!.body, { system: [{ type: 'text', text: PREFIX }, { type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })
  let text = ''
  for await (const chunk of await openai.chat.completions.create({ model: 'claude-sonnet-4-6', stream: true, messages: [{ role: 'user', content: 'hi' }] })) text += chunk.choices[0]?.delta.content ?? ''
  t.equal(text, 'Hello from Claude')

  t.same(upstream.refreshes, ['sk-ant-ort01-gw'], 'one renewal served all four requests')
  t.ok(upstream.requests.every((r) => r.headers.authorization === 'Bearer sk-ant-oat01-fresh-1'))
  const events = await usageEvents(app)
  t.equal(events.length, 4)
  for (const e of events) {
    t.match(e, { channel_id: ch.id, model_name: 'claude-sonnet-4-6', prompt_tokens: 150, cached_tokens: 100, cache_write_tokens: 30, completion_tokens: 7, usage_source: 'upstream', outcome: 'success' })
  }
  t.equal(events.filter((e) => e.is_stream).length, 2, 'two of them streamed')
})

t.test('a Codex channel: chat clients converted, Responses clients served natively, streamed and not', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeSubscriptions(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values([
    { key: 'ModelRatio', value: JSON.stringify({ 'gpt-5.4': 1.25 }) },
    { key: 'CompletionRatio', value: JSON.stringify({ 'gpt-5.4': 6 }) }
  ]).execute()
  // The Codex CLI's auth.json pasted as the key; the account comes from the token's claim.
  const authJson = { OPENAI_API_KEY: null, tokens: { id_token: jwt({ email: 'a@example.com' }), access_token: CODEX_TOKEN, refresh_token: 'rt-gw-45' }, last_refresh: '2026-01-01T00:00:00Z' }
  const ch = await seedChannel(app.db, { type: 45, baseUrl: `${upstream.url}/codex`, key: JSON.stringify(authJson), models: ['gpt-5.4'] })
  await reload(app)
  const openai = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })

  const chat = await openai.chat.completions.create({ model: 'gpt-5.4', max_tokens: 50, temperature: 0.2, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] })
  t.equal(chat.choices[0]?.message.content, 'Hello from Codex')
  t.equal(chat.choices[0]?.finish_reason, 'stop')
  t.match(chat.usage, { prompt_tokens: 40, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 16 }, completion_tokens_details: { reasoning_tokens: 3 } })
  t.same(upstream.requests[0]!.body, {
    model: 'gpt-5.4', instructions: 'Be brief.', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], store: false, stream: true
  }, 'a streamed Responses request without the refused fields')

  let text = ''
  let usage: OpenAI.CompletionUsage | undefined
  for await (const chunk of await openai.chat.completions.create({ model: 'gpt-5.4', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] })) {
    text += chunk.choices[0]?.delta.content ?? ''
    if (chunk.usage) usage = chunk.usage
  }
  t.equal(text, 'Hello from Codex')
  t.match(usage, { prompt_tokens: 40, completion_tokens: 9 })

  const response = await openai.responses.create({ model: 'gpt-5.4', input: 'hi', max_output_tokens: 64, temperature: 0.5 })
  t.equal(response.output_text, 'Hello from Codex', 'the output assembled from the streamed items')
  t.match(response, { id: 'resp_gw', status: 'completed', usage: CODEX_USAGE })
  t.match(upstream.requests[2]!.body, { model: 'gpt-5.4', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], store: false, stream: true })

  const types: string[] = []
  let streamed = ''
  for await (const event of await openai.responses.create({ model: 'gpt-5.4', input: 'hi', stream: true })) {
    types.push(event.type)
    if (event.type === 'response.output_text.delta') streamed += event.delta
    if (event.type === 'response.completed') t.match(event.response.output, [{ type: 'message', content: [{ type: 'output_text', text: 'Hello from Codex' }] }], 'the final event carries the items')
  }
  t.equal(streamed, 'Hello from Codex')
  t.equal(types.at(-1), 'response.completed')
  const final = await openai.responses.stream({ model: 'gpt-5.4', input: 'hi' }).finalResponse()
  t.equal(final.output_text, 'Hello from Codex', 'the SDK\'s stream helper gets the answer from the final event')

  t.ok(upstream.requests.every((r) => r.headers['chatgpt-account-id'] === ACCOUNT && r.headers.originator === 'codex_cli_rs'))
  const events = await usageEvents(app)
  t.equal(events.length, 5)
  for (const e of events) {
    t.match(e, { channel_id: ch.id, model_name: 'gpt-5.4', prompt_tokens: 40, cached_tokens: 16, completion_tokens: 9, usage_source: 'upstream', outcome: 'success' })
  }
  t.equal(events.filter((e) => e.is_stream).length, 3, 'three of them streamed')
})

t.test('two gateways on one Redis renew a Claude Code token once, write the new pair back, and a restarted gateway goes on without renewing', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const other = await secondGateway(t, env)
  const upstream = await fakeSubscriptions(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const credentials = { accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-gw', expiresAt: Date.now() - 60_000, scopes: ['user:inference'], subscriptionType: 'max' }
  const ch = await seedChannel(app.db, { type: 44, baseUrl: upstream.url, key: JSON.stringify({ claudeAiOauth: credentials }), models: ['claude-sonnet-4-6'] })
  await app.db.updateTable('channels').set({ setting: JSON.stringify({ token_url: `${upstream.url}/v1/oauth/token` }) }).where('id', '=', ch.id).execute()
  await reload(app)
  await reload(other.app)
  t.teardown(clearTokenCache)

  const ask = async (base: string) => {
    const anthropic = new Anthropic({ apiKey: key, baseURL: base, maxRetries: 0 })
    return await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
  }
  const answers = await Promise.all([url, other.url, url, other.url, url, other.url].map(ask))
  t.ok(answers.every((m) => m.content[0]?.type === 'text'), 'every request answered')
  t.same(upstream.refreshes, ['sk-ant-ort01-gw'], 'one renewal for both gateways')
  t.ok(upstream.requests.every((r) => r.headers.authorization === 'Bearer sk-ant-oat01-fresh-1'), 'both send the renewed token')

  // The row holds the new pair, sealed, in the CLI file's form, and both gateways reloaded it.
  const row = await app.db.selectFrom('channels').select(['key', 'status']).where('id', '=', ch.id).executeTakeFirstOrThrow()
  const stored = JSON.parse(box.open(row.key)) as { claudeAiOauth: Record<string, unknown> }
  t.match(stored.claudeAiOauth, { accessToken: 'sk-ant-oat01-fresh-1', refreshToken: 'sk-ant-ort01-next-1', scopes: ['user:inference'], subscriptionType: 'max' })
  t.ok(Number(stored.claudeAiOauth.expiresAt) > Date.now() + 7 * 3600_000, 'the grant\'s expiry, in milliseconds')
  t.equal(row.status, 1)
  for (const gw of [app, other.app]) {
    const deadline = Date.now() + 10_000
    while (!(gw.relayState.channels.get(ch.id)?.keys[0]?.key.includes('sk-ant-ort01-next-1') ?? false) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    t.match(gw.relayState.channels.get(ch.id)?.keys[0]?.key, /sk-ant-ort01-next-1/, 'the change was announced and reloaded')
  }

  // Store ids are hashes under the deployment's prefix, never the refresh token.
  const raw = new Redis(env.REDIS_URL!, { lazyConnect: true })
  t.teardown(() => raw.disconnect())
  const ids = await raw.keys(`${env.REDIS_KEY_PREFIX!}oauth:credential:*`)
  t.equal(ids.length, 2, 'the spent refresh token\'s entry and the new one\'s')
  t.notOk(ids.some((id) => id.includes('ort01')))
  const values = await Promise.all(ids.map(async (id) => await raw.get(id)))
  t.ok(values.every((v) => v !== null && !v.includes('ort01') && JSON.parse(box.open(v)).refresh_token === 'sk-ant-ort01-next-1'), 'values sealed like channel keys')

  // A restart: the first gateway goes, a new one (its memory empty) loads the row.
  await app.close()
  clearTokenCache()
  const restarted = await secondGateway(t, env)
  await ask(restarted.url)
  await ask(other.url)
  t.same(upstream.refreshes, ['sk-ant-ort01-gw'], 'no refresh token used again')
  t.equal(upstream.requests.at(-1)?.headers.authorization, 'Bearer sk-ant-oat01-fresh-1')
})
