// Type 41: Google Cloud Vertex AI with a service account key. The fixture's token endpoint checks
// each JWT assertion's RS256 signature with the account's public key before issuing a token, and
// the API refuses any request without a token it issued. Gemini models speak generateContent,
// Claude models Anthropic's Messages API (rawPredict).
import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { clearTokenCache, CredentialError, type RelayRequest } from '../../src/index.js'
import { MODEL, readChunks, relay, relayRequest, type NativeProtocol, type Seen } from '../kit.js'
import { anthropicError, anthropicMessage, anthropicStream } from './anthropic-wire.js'
import { GEMINI_USAGE, geminiAnswer, geminiError, geminiEvents } from './gemini-wire.js'

const PROJECT = 'modelgate-test-41'
const EMAIL = 'relay@modelgate-test-41.iam.gserviceaccount.com'
const KEY_ID = '8f3a1c0e9b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39'
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform'

const pair = () => generateKeyPairSync('rsa', { modulusLength: 2048 })
const { privateKey, publicKey } = pair()
const wrong = pair().privateKey
const pem = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }).toString()

/** The token endpoint's origin: the test server's, set when the channel is made. */
let tokenOrigin = 'http://127.0.0.1:1'
const tokenUri = () => `${tokenOrigin}/token`

/** A service account key file as Google issues it, on one line. */
const accountKey = (key: KeyObject) => JSON.stringify({
  type: 'service_account',
  project_id: PROJECT,
  private_key_id: KEY_ID,
  private_key: pem(key),
  client_email: EMAIL,
  client_id: '104633184905555512345',
  auth_uri: 'https://accounts.google.com/o/oauth2/auth',
  token_uri: tokenUri(),
  universe_domain: 'googleapis.com'
})

/** What the token endpoint has issued: token -> expiry (epoch ms). */
const issued = new Map<string, number>()
const tokenServer = { exchanges: 0, expiresIn: 3599, refused: 0 }

const b64json = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>

/** Why Google would refuse this assertion, or undefined. */
function assertionProblem (assertion: string): string | undefined {
  const [head = '', claims = '', signature = ''] = assertion.split('.')
  if (!verify('RSA-SHA256', Buffer.from(`${head}.${claims}`), publicKey, Buffer.from(signature, 'base64url'))) return 'Invalid JWT Signature.'
  const header = b64json(head)
  const body = b64json(claims)
  if (header.alg !== 'RS256' || header.kid !== KEY_ID) return 'Invalid JWT header.'
  const now = Math.floor(Date.now() / 1000)
  if (body.iss !== EMAIL || body.aud !== tokenUri() || body.scope !== SCOPE) return 'Invalid JWT claims.'
  if (typeof body.iat !== 'number' || typeof body.exp !== 'number' || body.iat > now + 60 || body.exp <= now || body.exp - body.iat > 3600) return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.'
  return undefined
}

/** Google's token endpoint: a signed assertion in, an access token out. */
function tokenEndpoint (res: ServerResponse, seen: Seen): boolean {
  if (seen.url !== '/token') return false
  const form = new URLSearchParams(seen.body.toString())
  const refuse = (description: string) => {
    tokenServer.refused++
    res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant', error_description: description }))
  }
  if (seen.method !== 'POST' || !String(seen.headers['content-type']).startsWith('application/x-www-form-urlencoded')) refuse('Bad Request')
  else if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') refuse('Invalid grant_type.')
  else {
    const problem = assertionProblem(form.get('assertion') ?? '..')
    if (problem !== undefined) refuse(problem)
    else {
      tokenServer.exchanges++
      const token = `ya29.${randomBytes(24).toString('base64url')}`
      issued.set(token, Date.now() + tokenServer.expiresIn * 1000)
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ access_token: token, expires_in: tokenServer.expiresIn, token_type: 'Bearer' }))
    }
  }
  return true
}

/** The bearer token of a request, when the token endpoint issued it and it has not expired. */
function validToken (seen: Seen): string | undefined {
  const token = /^Bearer (\S+)$/.exec(seen.headers.authorization ?? '')?.[1]
  const expires = token === undefined ? undefined : issued.get(token)
  return expires !== undefined && expires > Date.now() ? token : undefined
}

const unauthenticated = (res: ServerResponse) => {
  res.writeHead(401, { 'Content-Type': 'application/json' }).end(geminiError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.'))
}

const vertexPath = (region: string, publisher: string, model: string, method: string) => `/v1/projects/${PROJECT}/locations/${region}/publishers/${publisher}/models/${model}:${method}`
const geminiPath = (model: string, stream: boolean, region = 'us-central1') => vertexPath(region, 'google', model, stream ? 'streamGenerateContent?alt=sse' : 'generateContent')
const claudePath = (model: string, stream: boolean, region: string) => vertexPath(region, 'anthropic', model, stream ? 'streamRawPredict' : 'rawPredict')

const hello = () => anthropicStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Héllo, ' }, { type: 'text_delta', text: 'wörld 你好 🎉' }] }], 'end_turn')
const geminiHello = () => geminiEvents([
  { candidates: [{ content: { role: 'model', parts: [{ text: 'Héllo, ' }] }, index: 0 }], usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 }, modelVersion: MODEL, responseId: 'resp_1' },
  { candidates: [{ content: { role: 'model', parts: [{ text: 'wörld 你好 🎉' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: GEMINI_USAGE, modelVersion: MODEL, responseId: 'resp_1' }
])
const bodyOf = (seen: Seen) => JSON.parse(seen.body.toString()) as Record<string, unknown>

export const fixture: NativeProtocol = {
  channel: (origin) => {
    tokenOrigin = origin
    return { id: 41, type: 41, key: accountKey(privateKey), baseUrl: origin, other: 'us-central1', organization: null, setting: {} }
  },
  // The same account with another private key (a deleted or foreign key): Google refuses its assertions.
  get wrongKey () { return accountKey(wrong) },
  auxiliary: (res, seen) => tokenEndpoint(res, seen),
  authorized: (seen) => validToken(seen) !== undefined && seen.headers['x-goog-api-key'] === undefined && !seen.url.includes('key='),
  refuse: unauthenticated,
  chat: {
    path: (model, stream) => geminiPath(model, stream),
    answer: geminiAnswer([{ text: 'Hello there' }], 'STOP'),
    stream: geminiHello,
    tools: {
      answer: geminiAnswer([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }], 'STOP'),
      stream: () => geminiEvents([
        { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] }, finishReason: 'STOP', index: 0 }], usageMetadata: GEMINI_USAGE, modelVersion: MODEL, responseId: 'resp_1' }
      ])
    },
    checkBody: (t, body, seen) => {
      t.same(body.systemInstruction, { parts: [{ text: 'Be brief.' }] }, 'system instruction')
      t.same(body.contents, [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }], 'contents')
      t.same(body.tools, [{ functionDeclarations: [{ name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] }], 'tools')
      t.equal(body.model, undefined, 'the model goes in the URL')
      t.match(seen.headers.authorization, /^Bearer ya29\./)
    }
  },
  defaultUrls: (_channel, model) => ({ chat: `https://us-central1-aiplatform.googleapis.com${geminiPath(model, false)}` }),
  errors: [
    { what: '401 token refused', status: 401, body: geminiError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.'), action: 'disable', code: 'UNAUTHENTICATED' },
    { what: '403 no permission', status: 403, body: geminiError(403, 'PERMISSION_DENIED', `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${PROJECT}/locations/us-central1/publishers/google/models/gemini-2.5-pro' (or it may not exist).`, 'IAM_PERMISSION_DENIED'), action: 'disable', code: 'IAM_PERMISSION_DENIED' },
    { what: '403 API disabled', status: 403, body: geminiError(403, 'PERMISSION_DENIED', 'Vertex AI API has not been used in project 1234 before or it is disabled.', 'SERVICE_DISABLED'), action: 'disable', code: 'SERVICE_DISABLED' },
    { what: '429 quota', status: 429, body: geminiError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model with base model: gemini-2.5-pro.'), action: 'retry', code: 'RESOURCE_EXHAUSTED' },
    { what: '429 quota (stream array)', status: 429, body: `[${geminiError(429, 'RESOURCE_EXHAUSTED', 'Resource exhausted. Please try again later.')}]`, action: 'retry', code: 'RESOURCE_EXHAUSTED' },
    { what: '503 unavailable', status: 503, body: geminiError(503, 'UNAVAILABLE', 'The service is currently unavailable.'), action: 'retry', code: 'UNAVAILABLE' },
    { what: '400 invalid argument', status: 400, body: geminiError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.'), action: 'client', code: 'INVALID_ARGUMENT' },
    { what: '404 unknown model', status: 404, body: geminiError(404, 'NOT_FOUND', `Publisher Model \`projects/${PROJECT}/locations/us-central1/publishers/google/models/gemini-9\` was not found or your project does not have access to it.`), action: 'client', code: 'NOT_FOUND' },
    { what: 'Claude 400', status: 400, body: anthropicError('invalid_request_error', 'messages: roles must alternate between "user" and "assistant"'), action: 'client', code: 'invalid_request_error' },
    { what: 'Claude 529 overloaded', status: 529, body: anthropicError('overloaded_error', 'Overloaded'), action: 'retry', code: 'overloaded_error' }
  ],
  extra: async (t, { up, channel, adaptor, send }) => {
    /** Answers with `answer` once the token endpoint's token is shown; the token endpoint as well. */
    const serveWith = (answer: (res: ServerResponse, seen: Seen) => void) => up.answer((res, seen) => {
      if (tokenEndpoint(res, seen)) return
      if (validToken(seen) === undefined) unauthenticated(res)
      else answer(res, seen)
    })
    const jsonAnswer = (body: unknown) => (res: ServerResponse) => { res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body)) }
    const sseAnswer = (text: string) => (res: ServerResponse) => { res.writeHead(200, { 'Content-Type': 'text/event-stream' }).end(text) }
    const chat = (model: string, stream = false): RelayRequest => ({ ...relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) }, stream), model })
    const regional = { ...channel, other: JSON.stringify({ default: 'us-central1', 'claude-sonnet-4-5@20250929': 'us-east5', 'gemini-2.5-flash': 'global' }) }

    t.test('one token exchange serves concurrent and later requests; none without a token', async (t) => {
      clearTokenCache()
      tokenServer.exchanges = 0
      serveWith(jsonAnswer(geminiAnswer([{ text: 'Hello there' }], 'STOP')))
      const statuses = await Promise.all([1, 2, 3].map(async () => (await send(chat(MODEL))).status))
      statuses.push((await send(chat(MODEL))).status, (await send(chat(MODEL))).status)
      t.same(statuses, [200, 200, 200, 200, 200])
      t.equal(tokenServer.exchanges, 1, 'concurrent requests waited on one exchange, later ones used the cached token')
      const tokens = new Set(up.seen.slice(-5).map((seen) => seen.headers.authorization))
      t.equal(tokens.size, 1)
      const bare = adaptor.buildRequest(channel, chat(MODEL))
      const unsigned = await fetch(bare.url, { method: 'POST', headers: bare.headers, body: bare.body })
      t.equal(unsigned.status, 401, 'refused without a token')
      const forged = await fetch(bare.url, { method: 'POST', headers: { ...bare.headers, authorization: 'Bearer ya29.forged' }, body: bare.body })
      t.equal(forged.status, 401, 'refused with a token it did not issue')
      t.equal(adaptor.classifyFailure(401, await forged.text()).action, 'disable')
    })

    t.test('a token about to expire is renewed', async (t) => {
      clearTokenCache()
      tokenServer.exchanges = 0
      // Renewed 5 minutes before expiry: a 302 s token is used for about 2 s.
      tokenServer.expiresIn = 302
      t.teardown(() => { tokenServer.expiresIn = 3599 })
      serveWith(jsonAnswer(geminiAnswer([{ text: 'Hello there' }], 'STOP')))
      t.equal((await send(chat(MODEL))).status, 200)
      const first = up.last().headers.authorization
      t.equal((await send(chat(MODEL))).status, 200)
      t.equal(tokenServer.exchanges, 1, 'still fresh: reused')
      const deadline = Date.now() + 15_000
      while (tokenServer.exchanges < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        t.equal((await send(chat(MODEL))).status, 200)
      }
      t.equal(tokenServer.exchanges, 2, 'a new token was obtained')
      t.not(up.last().headers.authorization, first, 'and used')
    })

    t.test('a key that is not a service account key is refused before any call', async (t) => {
      const before = up.seen.length
      const good = JSON.parse(channel.key) as Record<string, unknown>
      const bad = [
        'AIzaSyA-not-a-service-account',
        '{',
        JSON.stringify({ ...good, private_key: undefined }),
        JSON.stringify({ ...good, project_id: '' }),
        JSON.stringify({ ...good, type: 'authorized_user' }),
        JSON.stringify({ ...good, private_key: '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n' })
      ]
      for (const key of bad) {
        clearTokenCache()
        const err = await send(chat(MODEL), { ...channel, key }).then(() => undefined, (e: unknown) => e)
        t.type(err, CredentialError, key.slice(0, 40))
        t.equal((err as CredentialError).action, 'disable')
      }
      for (const other of ['us central', '{"default": "evil.example/x"}', '{not json']) {
        const err = await send(chat(MODEL), { ...channel, other }).then(() => undefined, (e: unknown) => e)
        t.type(err, CredentialError, other)
      }
      t.equal(up.seen.length, before, 'nothing was sent')
    })

    t.test('regions: other names one, or one per model with a default; global has its own host', async (t) => {
      serveWith(jsonAnswer(geminiAnswer([{ text: 'Hello there' }], 'STOP')))
      t.equal((await send(chat('gemini-2.5-flash'), regional)).status, 200)
      t.equal(up.last().url, geminiPath('gemini-2.5-flash', false, 'global'))
      t.equal((await send(chat('gemini-2.5-pro', true), regional)).status, 200)
      t.equal(up.last().url, geminiPath('gemini-2.5-pro', true, 'us-central1'))
      const bare = { ...channel, baseUrl: '' }
      t.equal(adaptor.buildRequest({ ...bare, other: '' }, chat('gemini-2.5-pro')).url, `https://aiplatform.googleapis.com${geminiPath('gemini-2.5-pro', false, 'global')}`)
      t.equal(adaptor.buildRequest({ ...bare, other: regional.other }, chat('claude-sonnet-4-5-20250929')).url, `https://us-east5-aiplatform.googleapis.com${claudePath('claude-sonnet-4-5@20250929', false, 'us-east5')}`)
      t.equal(adaptor.buildRequest({ ...bare, other: 'europe-west1' }, chat('claude-opus-4-6', true)).url, `https://europe-west1-aiplatform.googleapis.com${claudePath('claude-opus-4-6', true, 'europe-west1')}`)
      t.equal(adaptor.buildRequest({ ...bare, other: 'europe-west1' }, chat('claude-haiku-4-5')).url, `https://europe-west1-aiplatform.googleapis.com${claudePath('claude-haiku-4-5@20251001', false, 'europe-west1')}`)
    })

    t.test('Claude models: Anthropic\'s body on rawPredict, converted for OpenAI clients', async (t) => {
      serveWith(jsonAnswer(anthropicMessage([{ type: 'text', text: 'Hello there' }], 'end_turn')))
      const req = chat('claude-sonnet-4-5-20250929')
      const res = await send(req, regional)
      t.equal(up.last().url, claudePath('claude-sonnet-4-5@20250929', false, 'us-east5'))
      const body = bodyOf(up.last())
      t.match(body, { anthropic_version: 'vertex-2023-10-16', max_tokens: 4096, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })
      t.equal(body.model, undefined)
      t.equal(body.stream, undefined)
      const converted = adaptor.convertResponse(regional, req, res.status, 'application/json', Buffer.from(await res.arrayBuffer()))
      t.match(JSON.parse(String(converted.body)), { object: 'chat.completion', choices: [{ message: { content: 'Hello there' }, finish_reason: 'stop' }] })
      t.same(converted.usage, { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })

      serveWith(sseAnswer(hello()))
      const streamed = chat('claude-sonnet-4-5-20250929', true)
      const converter = adaptor.createStream(regional, streamed)
      const relayed = await relay(await send(streamed, regional), converter)
      t.equal(up.last().url, claudePath('claude-sonnet-4-5@20250929', true, 'us-east5'))
      t.equal(bodyOf(up.last()).stream, true, 'streamRawPredict wants stream: true')
      t.match(readChunks(relayed.out + relayed.tail), { content: 'Héllo, wörld 你好 🎉', finish: 'stop', done: true, usage: { prompt_tokens: 12, completion_tokens: 7 } })
      t.same(converter.usage(), { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })
    })

    t.test('clients of the model\'s own protocol pass through; the others are converted', async (t) => {
      const anthropicBody = { model: 'alias', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }
      const toClaude: RelayRequest = { endpoint: 'messages', format: 'anthropic', model: 'claude-opus-4-6', stream: true, body: anthropicBody, headers: { 'anthropic-beta': 'context-1m-2025-08-07' } }
      serveWith(sseAnswer(hello()))
      const pass = adaptor.createStream(channel, toClaude)
      const passed = await relay(await send(toClaude), pass)
      t.equal(up.last().url, claudePath('claude-opus-4-6', true, 'us-central1'))
      t.same(bodyOf(up.last()), { anthropic_version: 'vertex-2023-10-16', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] })
      t.equal(up.last().headers['anthropic-beta'], 'context-1m-2025-08-07')
      t.equal(passed.out + passed.tail, hello(), 'Anthropic\'s events as sent')
      t.same(pass.usage(), { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })

      const geminiBody = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 20 } }
      const toGemini: RelayRequest = { endpoint: 'generate_content', format: 'gemini', model: 'gemini-2.5-pro', stream: false, body: geminiBody }
      serveWith(jsonAnswer(geminiAnswer([{ text: 'Hello there' }], 'STOP')))
      const native = await send(toGemini)
      t.same(bodyOf(up.last()), geminiBody, 'the Gemini body as written')
      t.same(adaptor.convertResponse(channel, toGemini, 200, 'application/json', Buffer.from(await native.arrayBuffer())).usage, { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })

      // An Anthropic client asking a Gemini model, streamed: Gemini's stream as Anthropic events.
      const crossed: RelayRequest = { ...toClaude, model: 'gemini-2.5-pro', headers: {} }
      serveWith(sseAnswer(geminiHello()))
      const converter = adaptor.createStream(channel, crossed)
      const relayed = await relay(await send(crossed), converter)
      t.equal(up.last().url, geminiPath('gemini-2.5-pro', true))
      t.match(bodyOf(up.last()), { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 50 } })
      const out = relayed.out + relayed.tail
      t.match(out, /^event: message_start\n/)
      t.match(out, /event: message_stop\n/)
      t.equal(out.split('\n').filter((line) => line.startsWith('data: ') && line.includes('text_delta')).map((line) => (JSON.parse(line.slice(6)) as { delta: { text: string } }).delta.text).join(''), 'Héllo, wörld 你好 🎉')
      t.ok(converter.finished())
      t.same(converter.usage(), { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })

      // A Gemini client asking a Claude model: Claude's answer in Gemini's shape.
      const geminiToClaude: RelayRequest = { ...toGemini, model: 'claude-sonnet-4-5' }
      serveWith(jsonAnswer(anthropicMessage([{ type: 'text', text: 'Hello there' }], 'end_turn')))
      const res = await send(geminiToClaude)
      t.equal(up.last().url, claudePath('claude-sonnet-4-5@20250929', false, 'us-central1'))
      t.match(bodyOf(up.last()), { anthropic_version: 'vertex-2023-10-16', max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })
      const converted = adaptor.convertResponse(channel, geminiToClaude, 200, 'application/json', Buffer.from(await res.arrayBuffer()))
      t.match(JSON.parse(String(converted.body)), { candidates: [{ content: { role: 'model', parts: [{ text: 'Hello there' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 7 } })
      t.same(converted.usage, { promptTokens: 12, completionTokens: 7, cachedTokens: 4 })
    })

    t.test('supports the three protocols and nothing else', async (t) => {
      t.ok(adaptor.supports('messages', 'anthropic'))
      t.ok(adaptor.supports('generate_content', 'gemini'))
      t.notOk(adaptor.supports('embeddings', 'openai'))
      t.equal(adaptor.listModelsRequest(channel), undefined)
    })
  }
}
