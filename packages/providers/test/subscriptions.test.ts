// The subscription types' building blocks (Claude Code, Codex) beyond their native fixtures:
// where OAuth credentials are read from, Claude Code's identity block and beta flags, and the
// Codex stream converters' rarer paths. Requests over the wire are in test/native/44-*.ts and 45-*.ts.
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { CLAUDE_CODE_CLIENT_ID, CLAUDE_CODE_SYSTEM_PREFIX, mergeBetas, withClaudeCodeSystem } from '../src/claude-code/index.js'
import { CODEX_CLIENT_ID, convertCodexAnswer, createCodexChatStream, createCodexResponsesStream, MAX_BACKFILL_BYTES } from '../src/codex/index.js'
import { adaptorFor, clearTokenCache, CredentialError, type ChannelConfig, type CredentialStore, type RelayRequest } from '../src/index.js'
import { epochMs, readOAuthCredentials } from '../src/net/oauth.js'
import { MODEL, readChunks, startUpstream, type Upstream } from './kit.js'
import { authority, jwt, type Authority } from './native/oauth-authority.js'
import { responseShell, responsesStream, RESPONSES_USAGE } from './native/responses-wire.js'

const channel = (key: string, setting: Record<string, unknown> = {}): ChannelConfig => ({ id: 1, type: 45, key, baseUrl: '', other: '', organization: null, setting })
const chatReq = (stream: boolean): RelayRequest => ({ endpoint: 'chat', format: 'openai', model: MODEL, stream, body: { messages: [{ role: 'user', content: 'hi' }] } })
const sse = (events: Array<Record<string, unknown>>) => events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('')

t.test('where OAuth credentials are read from', async (t) => {
  t.match(readOAuthCredentials(channel('sk-ant-oat01-a')), { accessToken: 'sk-ant-oat01-a', refreshToken: undefined, expiresAt: undefined }, 'a bare key is the access token')
  t.match(readOAuthCredentials(channel('sk-ant-oat01-a', { refresh_token: 'r', expires_at: 1_800_000_000 })), { accessToken: 'sk-ant-oat01-a', refreshToken: 'r', expiresAt: 1_800_000_000_000 }, 'the setting completes a bare key')
  t.match(readOAuthCredentials(channel('placeholder', { access_token: 'a2', refresh_token: 'r' })), { accessToken: 'a2', refreshToken: 'r' }, 'the setting\'s access token replaces a placeholder key')
  t.match(readOAuthCredentials(channel('{"access_token":"a","refresh_token":"r","expires_at":"2030-01-01T00:00:00Z"}', { refresh_token: 'ignored' })), { accessToken: 'a', refreshToken: 'r', expiresAt: Date.parse('2030-01-01T00:00:00Z') }, 'a JSON key is the whole credential')
  t.match(readOAuthCredentials(channel(JSON.stringify({ claudeAiOauth: { accessToken: 'a', refreshToken: 'r', expiresAt: 1_800_000_000_123 } }))), { accessToken: 'a', refreshToken: 'r', expiresAt: 1_800_000_000_123 }, 'Claude Code\'s .credentials.json')
  const codex = readOAuthCredentials(channel(JSON.stringify({ OPENAI_API_KEY: null, tokens: { id_token: 'i', access_token: 'a', refresh_token: 'r', account_id: 'acct' }, last_refresh: '2026-01-01T00:00:00Z' })))
  t.match(codex, { accessToken: 'a', refreshToken: 'r', fields: { account_id: 'acct', id_token: 'i' } }, 'Codex\'s auth.json')
  t.throws(() => readOAuthCredentials(channel('{"access_token": ')), CredentialError, 'a key that is not JSON after its brace')
  t.throws(() => readOAuthCredentials(channel('{"expires_at": 1}')), CredentialError, 'no token at all')
  t.equal(epochMs('1700000000'), 1_700_000_000_000)
  t.equal(epochMs(0), undefined)
})

t.test('Claude Code\'s identity block and beta flags', async (t) => {
  t.same(withClaudeCodeSystem({ model: 'm' }).system, [{ type: 'text', text: CLAUDE_CODE_SYSTEM_PREFIX }])
  t.same(withClaudeCodeSystem({ system: '' }).system, [{ type: 'text', text: CLAUDE_CODE_SYSTEM_PREFIX }])
  const blocks = [{ type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral' } }]
  t.same(withClaudeCodeSystem({ system: blocks }).system, [{ type: 'text', text: CLAUDE_CODE_SYSTEM_PREFIX }, ...blocks], 'blocks keep their cache breakpoints')
  const own = { system: [{ type: 'text', text: CLAUDE_CODE_SYSTEM_PREFIX }, ...blocks] }
  t.equal(withClaudeCodeSystem(own), own, 'Claude Code\'s own request is left alone')
  t.equal(mergeBetas(['a', 'b'], ' b , c,,a '), 'a,b,c')
  t.equal(mergeBetas(['a'], undefined), 'a')
})

t.test('Codex chat stream: calls announced when done, refusals, a failure after content', async (t) => {
  const converter = createCodexChatStream(chatReq(true))
  const out = converter.push(Buffer.from(sse([
    { type: 'response.created', response: responseShell('in_progress', null) },
    { type: 'response.refusal.delta', output_index: 0, delta: 'I cannot.' },
    { type: 'response.output_item.done', output_index: 1, item: { type: 'function_call', id: 'fc_1', call_id: 'call_9', name: 'lookup', arguments: '{"q":1}' } },
    { type: 'response.failed', response: { ...responseShell('failed', null), error: { code: 'server_error', message: 'boom' } } }
  ]))).toString() + converter.end().toString()
  const events = out.split('\n\n').filter((e) => e !== '')
  const last = JSON.parse(events.at(-1)!.slice('data: '.length)) as { error?: { code: string, message: string } }
  t.same(last.error, { message: 'boom', type: 'upstream_error', param: null, code: 'server_error' }, 'the failure reaches the client as an error chunk')
  const summary = readChunks(events.slice(0, -1).map((e) => e + '\n\n').join(''))
  t.same(summary.toolCalls, [{ id: 'call_9', name: 'lookup', arguments: '{"q":1}' }])
  t.match(out, /"refusal":"I cannot."/)
  t.notOk(converter.finished())
  t.equal(converter.usage(), undefined)
})

t.test('Codex Responses stream: a full final output is kept; items past the backfill cap are not held', async (t) => {
  const full = createCodexResponsesStream()
  const upstream = responsesStream([{ kind: 'text', pieces: ['Hi'] }], { fullOutput: true })
  t.equal(full.push(Buffer.from(upstream)).toString(), upstream, 'relayed byte for byte')
  t.same(full.usage(), { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })

  const big = createCodexResponsesStream()
  const huge = 'x'.repeat(MAX_BACKFILL_BYTES + 10)
  const out = big.push(Buffer.from(sse([
    { type: 'response.output_item.done', output_index: 0, item: { type: 'message', content: [{ type: 'output_text', text: huge }] } },
    { type: 'response.completed', response: responseShell('completed', RESPONSES_USAGE) }
  ]))).toString()
  const final = JSON.parse(out.split('\n\n').filter((e) => e !== '').at(-1)!.split('\ndata: ')[1]!) as { response: { output: unknown[] } }
  t.same(final.response.output, [], 'the final event as the backend sent it')
  t.ok(big.finished())
})

t.test('Codex answers read whole: a JSON response from a mirror, a cut stream', async (t) => {
  const json = JSON.stringify(responseShell('completed', RESPONSES_USAGE, [{ type: 'message', content: [{ type: 'output_text', text: 'Hi' }] }]))
  const converted = convertCodexAnswer(chatReq(false), 200, 'application/json', Buffer.from(json))
  t.match(JSON.parse(String(converted.body)), { object: 'chat.completion', choices: [{ message: { content: 'Hi' } }] })
  t.same(converted.usage, { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })

  const stream = responsesStream([{ kind: 'text', pieces: ['Hi'] }])
  const cut = convertCodexAnswer(chatReq(false), 200, 'text/event-stream', Buffer.from(stream.slice(0, stream.indexOf('event: response.completed'))))
  t.equal(cut.status, 502)
  t.match(cut.failure, { action: 'retry', code: 'upstream_stream_cut' })
  const long = convertCodexAnswer(chatReq(false), 200, 'text/event-stream', Buffer.from(sse([{ type: 'error', code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model.' }])))
  t.match(long, { status: 400, failure: { action: 'client', code: 'context_length_exceeded' } })
  t.match(JSON.parse(String(cut.body)), { error: { code: 'upstream_stream_cut' } })
  t.equal(cut.usage, undefined)
})

// Renewals shared by several processes (gateway replicas) through one store: what the gateway's
// Redis does, in memory here (the Redis store itself is tested in the gateway). Each process has
// its own client object, so its in-process token cache is its own.

/** The store's data, and the channel row (key and setting) its `save` writes back to. */
interface Shared {
  values: Map<string, string>
  locks: Map<string, { token: string, until: number }>
  row: { key: string, setting: Record<string, unknown> }
  saves: number
}

/** One process's client of the shared store; every call waits a turn of the event loop, as a network call does. */
function storeClient (shared: Shared): CredentialStore {
  const turn = async () => { await new Promise((resolve) => setImmediate(resolve)) }
  return {
    get: async (id) => { await turn(); return shared.values.get(id) },
    set: async (id, value) => { await turn(); shared.values.set(id, value) },
    acquire: async (id, ttlMs) => {
      await turn()
      const held = shared.locks.get(id)
      if (held !== undefined && held.until > Date.now()) return undefined
      const token = randomUUID()
      shared.locks.set(id, { token, until: Date.now() + ttlMs })
      return token
    },
    release: async (id, token) => {
      await turn()
      if (shared.locks.get(id)?.token === token) shared.locks.delete(id)
    },
    save: async (_channelId, update) => {
      await turn()
      shared.saves++
      shared.row = { key: shared.row.key.split('\n').map((line) => update.key(line) ?? line).join('\n'), setting: update.setting(shared.row.setting) ?? shared.row.setting }
    }
  }
}

const CLAIM = 'https://api.openai.com/auth'

/** Anthropic's and OpenAI's token endpoints (the fixtures' rotating authority) on one local server. */
async function tokenEndpoints (t: Test): Promise<{ up: Upstream, claude: Authority, codex: Authority }> {
  const up = await startUpstream(t)
  const claude = authority({
    path: '/v1/oauth/token',
    checkBody: (body) => body.grant_type !== 'refresh_token' || body.client_id !== CLAUDE_CODE_CLIENT_ID ? 'bad request' : undefined,
    issue: (n) => `sk-ant-oat01-shared-${n}`,
    expiresIn: true,
    refuse: (res) => { res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant', error_description: 'Refresh token not found or invalid' })) }
  })
  const codex = authority({
    path: '/oauth/token',
    checkBody: (body) => body.grant_type !== 'refresh_token' || body.client_id !== CODEX_CLIENT_ID ? 'bad request' : undefined,
    issue: (n, exp) => jwt({ exp, n, [CLAIM]: { chatgpt_account_id: 'acct-shared' } }),
    extra: (access) => ({ id_token: jwt({ email: 'a@example.com', for: access.slice(-8) }) }),
    expiresIn: false,
    refuse: (res) => { res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: 'Your refresh token has already been used', code: 'refresh_token_reused' } })) }
  })
  up.answer((res, seen) => {
    if (!claude.serve(res, seen) && !codex.serve(res, seen)) res.writeHead(404).end()
  })
  return { up, claude, codex }
}

/** The bearer token `store`'s process would send for the channel row as it read it. */
async function bearerOf (type: number, row: Shared['row'], origin: string, store: CredentialStore | undefined): Promise<string> {
  const channel: ChannelConfig = { id: 7, type, key: row.key, baseUrl: origin, other: '', organization: null, setting: row.setting, ...(store === undefined ? {} : { credentials: store }) }
  const up = await adaptorFor(type)!.authorize!(channel, { method: 'POST', url: `${origin}/api`, headers: {} })
  return String(up.headers.authorization).replace(/^Bearer /, '')
}

t.test('replicas sharing a credential store renew a rotating refresh token once, write it back, and survive restarts and stale copies', async (t) => {
  t.teardown(clearTokenCache)
  const { up, claude } = await tokenEndpoints(t)
  claude.live('sk-ant-ort01-shared')
  claude.lifetime = 60
  const tokenUrl = `${up.origin}/v1/oauth/token`
  const original = { key: JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-shared', expiresAt: Date.now() - 1000, scopes: ['user:inference'] } }), setting: { token_url: tokenUrl } }
  const shared: Shared = { values: new Map(), locks: new Map(), row: original, saves: 0 }
  const a = storeClient(shared)
  const b = storeClient(shared)

  // Grants living less than the renewal margin: any request would renew, yet one renewal serves all waiting.
  const tokens = await Promise.all([a, b, a, b, a, b].map(async (store) => await bearerOf(44, original, up.origin, store)))
  t.equal(claude.exchanges.length, 1, 'one token request for two replicas')
  t.ok(tokens.every((token) => token === claude.lastAccess()), 'both replicas send the renewed token')
  t.equal(shared.saves, 1, 'written back once')
  const first = shared.row
  t.match(JSON.parse(first.key), { claudeAiOauth: { accessToken: claude.lastAccess(), refreshToken: claude.lastRefresh(), scopes: ['user:inference'] } }, 'the key holds the new pair, in the CLI file\'s form')
  t.ok(Math.abs((JSON.parse(first.key) as { claudeAiOauth: { expiresAt: number } }).claudeAiOauth.expiresAt - (Date.now() + 60_000)) < 5000, 'expiresAt in milliseconds')
  t.same(first.setting, original.setting)

  // A replica that reloaded the row renews with the rotated token; one still holding the original
  // credentials follows the store to the newest pair and renews that one, never a used token.
  clearTokenCache()
  await bearerOf(44, first, up.origin, storeClient(shared))
  t.equal(claude.exchanges.at(-1)?.body.refresh_token, JSON.parse(first.key).claudeAiOauth.refreshToken)
  const second = claude.lastRefresh()
  claude.lifetime = 3600
  clearTokenCache()
  const stale = await bearerOf(44, original, up.origin, storeClient(shared))
  t.equal(claude.exchanges.length, 3)
  t.equal(claude.exchanges.at(-1)?.body.refresh_token, second, 'the newest refresh token, found from the original one')
  t.equal(stale, claude.lastAccess())
  t.ok(claude.exchanges.every((e) => e.granted), 'no used refresh token was ever sent')
  t.equal(JSON.parse(shared.row.key).claudeAiOauth.refreshToken, claude.lastRefresh(), 'the row follows, though its writer held an older copy')

  // Restarted replicas: the fresh pair comes from the store, or from the row once the store is emptied.
  clearTokenCache()
  t.equal(await bearerOf(44, shared.row, up.origin, storeClient(shared)), claude.lastAccess())
  t.equal(await bearerOf(44, original, up.origin, storeClient(shared)), claude.lastAccess(), 'the original credentials lead to it')
  clearTokenCache()
  shared.values.clear()
  t.equal(await bearerOf(44, shared.row, up.origin, storeClient(shared)), claude.lastAccess(), 'the row alone holds it')
  t.equal(claude.exchanges.length, 3, 'no renewal after a restart')
})

t.test('write-back: one line of a multi-key Codex channel in auth.json form; credentials in the setting', async (t) => {
  t.teardown(clearTokenCache)
  const { up, claude, codex } = await tokenEndpoints(t)
  codex.live('rt-shared-45')
  const other = JSON.stringify({ access_token: 'other-account', refresh_token: 'rt-other', account_id: 'acct-other' })
  const authJson = { OPENAI_API_KEY: null, tokens: { id_token: jwt({ email: 'a@example.com' }), access_token: jwt({ exp: 1 }), refresh_token: 'rt-shared-45', account_id: 'acct-shared' }, last_refresh: '2026-01-01T00:00:00Z' }
  const shared: Shared = { values: new Map(), locks: new Map(), row: { key: `${other}\n${JSON.stringify(authJson)}`, setting: { token_url: `${up.origin}/oauth/token` } }, saves: 0 }
  const row = { ...shared.row, key: JSON.stringify(authJson) }
  t.equal(await bearerOf(45, row, up.origin, storeClient(shared)), codex.lastAccess())
  const [kept, renewed] = shared.row.key.split('\n')
  t.equal(kept, other, 'the other key is left alone')
  const written = JSON.parse(renewed!) as { tokens: Record<string, unknown>, last_refresh: string, OPENAI_API_KEY: null }
  t.match(written, { OPENAI_API_KEY: null, tokens: { access_token: codex.lastAccess(), refresh_token: codex.lastRefresh(), account_id: 'acct-shared' } })
  t.not(written.tokens.id_token, authJson.tokens.id_token, 'the new id token')
  t.not(written.last_refresh, authJson.last_refresh)
  t.equal(typeof written.tokens.expires_at, 'number', 'the expiry, in epoch seconds')
  t.ok(Math.abs(Number(written.tokens.expires_at) - (Date.now() / 1000 + 3600)) < 5)

  // Claude Code credentials in the setting (the key a placeholder): merged into it.
  claude.live('sk-ant-ort01-setting')
  const setting = { access_token: 'sk-ant-oat01-held', refresh_token: 'sk-ant-ort01-setting', expires_at: Math.floor(Date.now() / 1000) - 60, token_url: `${up.origin}/v1/oauth/token` }
  const inSetting: Shared = { values: new Map(), locks: new Map(), row: { key: 'placeholder', setting }, saves: 0 }
  t.equal(await bearerOf(44, inSetting.row, up.origin, storeClient(inSetting)), claude.lastAccess())
  t.equal(inSetting.row.key, 'placeholder')
  t.same(inSetting.row.setting, { ...setting, access_token: claude.lastAccess(), refresh_token: claude.lastRefresh(), expires_at: inSetting.row.setting.expires_at })
  t.ok(Math.abs(Number(inSetting.row.setting.expires_at) - (Date.now() / 1000 + 3600)) < 5, 'seconds, as the setting had them')
})

t.test('a shared store that fails: a fresh held token needs no store; a renewal is retried elsewhere, the channel kept', async (t) => {
  t.teardown(clearTokenCache)
  const { up, claude } = await tokenEndpoints(t)
  const broken: CredentialStore = {
    get: async () => { throw new Error('connection refused') },
    set: async () => { throw new Error('connection refused') },
    acquire: async () => { throw new Error('connection refused') },
    release: async () => {}
  }
  const setting = { access_token: 'sk-ant-oat01-fresh', refresh_token: 'sk-ant-ort01-x', expires_at: Math.floor(Date.now() / 1000) + 3600, token_url: `${up.origin}/v1/oauth/token` }
  t.equal(await bearerOf(44, { key: 'placeholder', setting }, up.origin, broken), 'sk-ant-oat01-fresh')
  const err = await bearerOf(44, { key: 'placeholder', setting: { ...setting, refresh_token: 'sk-ant-ort01-y', expires_at: 1 } }, up.origin, broken).then(() => undefined, (e: unknown) => e)
  t.type(err, CredentialError)
  t.match(err, { action: 'retry', status: 503, message: /credential store failed/ })
  t.equal(claude.exchanges.length, 0, 'nothing renewed without the lock')
})
