import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadGatewayConfig } from '@modelgate/config'
import { ROLES, TOKEN_STATUS, USAGE_QUEUE, type Role, type TokenStatus, type UsageBatch, type UsageEvent } from '@modelgate/contracts'
import { type Database, type Kysely, createDb, redisSettlement, settleUsageBatch } from '@modelgate/db'
import { QuotaStore } from '@modelgate/quota'
import { fastifyOptions, SecretBox, tokenKeyHash } from '@modelgate/service'
import { createServiceEnv, TEST_SECRETS } from '@modelgate/testing'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import gateway from '../src/app.js'

export const box = new SecretBox(TEST_SECRETS.CRYPTO_SECRET)

/** A gateway on a fresh database; seed with the helpers below, then `await reload(app)`. */
export async function buildGateway (t: Test, env: Record<string, string> = {}): Promise<{ app: FastifyInstance, url: string, env: Record<string, string> }> {
  const base = await createServiceEnv(t)
  // The database is migrated (createServiceEnv): seeding can happen before the gateway loads its state.
  const db = createDb(base.DATABASE_URL!, { max: 2 })
  await db.destroy()
  const full = { ...base, CONTROL_PLANE_URL: 'http://127.0.0.1:1', UPSTREAM_TIMEOUT_MS: '2000', ...env }
  const app = Fastify(fastifyOptions('gateway', 'silent', { trustRequestId: false }))
  await app.register(gateway, { config: loadGatewayConfig(full) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, env: full }
}

/** Another gateway on the same database and Redis as one built by {@link buildGateway} (a second replica). */
export async function secondGateway (t: Test, env: Record<string, string>): Promise<{ app: FastifyInstance, url: string }> {
  const app = Fastify(fastifyOptions('gateway', 'silent', { trustRequestId: false }))
  await app.register(gateway, { config: loadGatewayConfig(env) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }
}

export async function reload (app: FastifyInstance): Promise<void> {
  await app.relayState.loadAll()
}

export async function seedUser (db: Kysely<Database>, opts: { quota?: number, role?: Role, group?: string, username?: string, concurrency?: number } = {}) {
  return await db.insertInto('users').values({
    username: opts.username ?? `u${randomBytes(3).toString('hex')}`,
    quota: opts.quota ?? 10_000_000,
    role: opts.role ?? ROLES.common,
    group: opts.group ?? 'default',
    access_token_hash: null,
    aff_code: null,
    concurrency_limit: opts.concurrency ?? 0,
    deleted_at: null,
    setting: {}
  }).returningAll().executeTakeFirstOrThrow()
}

/** A token of `userId`; returns its row and the key a client sends. */
export async function seedToken (db: Kysely<Database>, userId: number, opts: Partial<{
  remain: number, unlimited: boolean, status: TokenStatus, expired: number, modelLimits: string, allowIps: string, group: string, name: string,
  rpm: number, tpm: number, concurrency: number
}> = {}) {
  const key = `sk-${randomBytes(24).toString('hex')}`
  const row = await db.insertInto('tokens').values({
    user_id: userId,
    name: opts.name ?? 'test token',
    key_hash: tokenKeyHash(key),
    key_encrypted: box.seal(key),
    remain_quota: opts.remain ?? 10_000_000,
    unlimited_quota: opts.unlimited ?? false,
    status: opts.status ?? TOKEN_STATUS.enabled,
    expired_time: opts.expired ?? -1,
    model_limits_enabled: opts.modelLimits !== undefined,
    model_limits: opts.modelLimits ?? '',
    allow_ips: opts.allowIps ?? '',
    group: opts.group ?? '',
    rpm_limit: opts.rpm ?? 0,
    tpm_limit: opts.tpm ?? 0,
    concurrency_limit: opts.concurrency ?? 0,
    deleted_at: null
  }).returningAll().executeTakeFirstOrThrow()
  return { row, key }
}

/** A channel with its abilities (one per group x model). */
export async function seedChannel (db: Kysely<Database>, opts: {
  baseUrl: string, models: string[], groups?: string[], type?: number, priority?: number, weight?: number, key?: string,
  autoBan?: boolean, modelMapping?: Record<string, string>, statusCodeMapping?: Record<string, string>, name?: string, proxyUrl?: string,
  maxInputTokens?: number, multiKeyMode?: string, paramOverride?: string, headerOverride?: string
}) {
  const groups = opts.groups ?? ['default']
  const ch = await db.insertInto('channels').values({
    type: opts.type ?? 1,
    name: opts.name ?? 'upstream',
    key: box.seal(opts.key ?? 'sk-upstream-secret'),
    base_url: opts.baseUrl,
    models: opts.models.join(','),
    group: groups.join(','),
    priority: opts.priority ?? 0,
    weight: opts.weight ?? 0,
    auto_ban: opts.autoBan === false ? 0 : 1,
    model_mapping: opts.modelMapping === undefined ? '' : JSON.stringify(opts.modelMapping),
    status_code_mapping: opts.statusCodeMapping === undefined ? '' : JSON.stringify(opts.statusCodeMapping),
    openai_organization: null,
    proxy_url: opts.proxyUrl ?? '',
    tag: null,
    max_input_tokens: opts.maxInputTokens ?? 0,
    multi_key_mode: opts.multiKeyMode ?? 'random',
    param_override: opts.paramOverride ?? '',
    header_override: opts.headerOverride ?? '',
    other_info: {}
  }).returningAll().executeTakeFirstOrThrow()
  await db.insertInto('abilities').values(groups.flatMap((group) => opts.models.map((model) => ({
    group, model, channel_id: ch.id, priority: opts.priority ?? 0, weight: opts.weight ?? 0, tag: null
  })))).execute()
  return ch
}

/** Every usage event the gateway queued, in order. */
export async function usageEvents (app: FastifyInstance): Promise<UsageEvent[]> {
  // A request that just ended may still be counting its tokens, or have its event in the buffer.
  await app.usagePublisher.drain()
  const jobs = await app.usagePublisher.queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized'])
  return jobs.flatMap((j) => (j.data as UsageBatch).events).sort((a, b) => a.use_time_ms - b.use_time_ms)
}

export { USAGE_QUEUE }

/** Sets options (upserts; values not strings are stored as JSON); `await reload(app)` after. */
export async function setOptions (db: Kysely<Database>, values: Record<string, unknown>): Promise<void> {
  for (const [key, value] of Object.entries(values)) {
    const text = typeof value === 'string' ? value : JSON.stringify(value)
    await db.insertInto('options').values({ key, value: text }).onConflict((oc) => oc.column('key').doUpdateSet({ value: text })).execute()
  }
}

/** Settles events as the billing worker does: Postgres, then the Redis correction of each reservation. */
export async function settle (app: FastifyInstance, events: readonly UsageEvent[]): Promise<void> {
  await settleUsageBatch(app.db, events, { writeLog: true })
  await new QuotaStore(app.redis).settleMany(events.map(redisSettlement))
}

/** How one fake upstream behaves; tests change it between requests. */
export interface UpstreamBehaviour {
  /** Answer every request with this status and an OpenAI error body. */
  failWith?: { status: number, body?: unknown }
  /** Wait this long before answering. */
  delayMs?: number
  /** Stream this many content chunks, `chunkDelayMs` apart. */
  chunks?: number
  chunkDelayMs?: number
  /** Send no usage chunk at the end of a stream. */
  noUsage?: boolean
  /** The `usage` object of non-streamed chat answers, replacing the default one. */
  usage?: Record<string, unknown>
  /** Cut the stream after this many chunks, without [DONE]. */
  dieAfter?: number
  /** Keep the connection open this long after [DONE] before ending the body. */
  holdAfterDoneMs?: number
  /** Keys refused with OpenAI's 401 invalid_api_key (a revoked key). */
  deadKeys?: string[]
}

export interface FakeOpenAI {
  url: string
  behaviour: UpstreamBehaviour
  requests: Array<{ path: string, headers: IncomingMessage['headers'], body: Buffer }>
  /** Resolves when a streaming request's connection was closed by the gateway. */
  closedEarly: Promise<void>
}

/** A real HTTP server speaking OpenAI's protocol (JSON, SSE stream with usage, errors, binary audio). */
export async function fakeOpenAI (t: Test, behaviour: UpstreamBehaviour = {}): Promise<FakeOpenAI> {
  let markClosed: () => void = () => {}
  const fake: FakeOpenAI = { url: '', behaviour, requests: [], closedEarly: new Promise<void>((resolve) => { markClosed = resolve }) }
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => { void answer(req, res, Buffer.concat(chunks)) })
  })
  const answer = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const path = (req.url ?? '').split('?')[0] ?? ''
    fake.requests.push({ path, headers: req.headers, body })
    const b = fake.behaviour
    // The wait ends early when the caller goes away (a killed gateway), so no timer outlives it.
    if (b.delayMs !== undefined) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, b.delayMs)
        res.once('close', () => { clearTimeout(timer); resolve() })
      })
    }
    if (res.destroyed) return
    if (b.deadKeys?.some((k) => req.headers.authorization === `Bearer ${k}`) === true) {
      res.writeHead(401, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }))
      return
    }
    if (b.failWith !== undefined) {
      res.writeHead(b.failWith.status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(b.failWith.body ?? { error: { message: `upstream says ${b.failWith.status}`, type: 'server_error', code: null } }))
      return
    }
    const json = (() => { try { return JSON.parse(body.toString()) as Record<string, unknown> } catch { return {} } })()
    const model = typeof json['model'] === 'string' ? json['model'] : 'whisper-1'
    if (path === '/v1/chat/completions' && json['stream'] === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const n = b.chunks ?? 3
      res.on('close', () => { if (!res.writableFinished) markClosed() })
      for (let i = 0; i < n; i++) {
        if (b.dieAfter !== undefined && i >= b.dieAfter) { res.destroy(); return }
        if (res.destroyed) { markClosed(); return }
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] })}\n\n`)
        if (b.chunkDelayMs !== undefined) await new Promise((r) => setTimeout(r, b.chunkDelayMs))
      }
      res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`)
      const includeUsage = (json['stream_options'] as Record<string, unknown> | undefined)?.['include_usage'] === true
      if (includeUsage && b.noUsage !== true) {
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices: [], usage: { prompt_tokens: 11, completion_tokens: n * 2, total_tokens: 11 + n * 2 } })}\n\n`)
      }
      if (b.holdAfterDoneMs === undefined) {
        res.end('data: [DONE]\n\n')
        return
      }
      res.write('data: [DONE]\n\n')
      await new Promise((r) => setTimeout(r, b.holdAfterDoneMs))
      res.end()
      return
    }
    if (path === '/v1/responses' && json['stream'] === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const ev = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
      const response = { id: 'resp_2', object: 'response', created_at: 1, status: 'in_progress', model, output: [] }
      ev('response.created', { sequence_number: 0, response })
      ev('response.output_text.delta', { sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi ' })
      ev('response.output_text.delta', { sequence_number: 2, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'there' })
      ev('response.completed', { sequence_number: 3, response: { ...response, status: 'completed', usage: { input_tokens: 7, output_tokens: 2, total_tokens: 9, input_tokens_details: { cached_tokens: 3 } } } })
      res.end()
      return
    }
    const send = (obj: unknown) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(obj)) }
    switch (path) {
      case '/v1/chat/completions':
        send({ id: 'c1', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there!' }, finish_reason: 'stop' }], ...(b.noUsage === true ? {} : { usage: b.usage ?? { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } }) })
        return
      case '/v1/embeddings': {
        const vector = [0.1, 0.2, 0.3]
        const embedding = json['encoding_format'] === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector
        send({ object: 'list', model, data: [{ object: 'embedding', index: 0, embedding }], usage: { prompt_tokens: 5, total_tokens: 5 } })
      }
        return
      case '/v1/images/generations':
        send({ created: 1, data: [{ url: 'https://images.example/1.png' }] })
        return
      case '/v1/audio/speech':
        res.writeHead(200, { 'content-type': 'audio/mpeg' })
        res.end(Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0xff]))
        return
      case '/v1/audio/transcriptions':
        send({ text: 'transcribed words here' })
        return
      case '/v1/moderations':
        send({ id: 'm1', model, results: [{ flagged: false, categories: {}, category_scores: {} }] })
        return
      case '/v1/responses':
        send({ id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model, output: [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi from responses', annotations: [] }] }], usage: { input_tokens: 9, output_tokens: 5, total_tokens: 14 } })
        return
      default:
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `no route ${path}`, type: 'invalid_request_error', code: 'unknown_url' } }))
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return fake
}

export interface FakeAnthropic {
  url: string
  /** The key it accepts in `x-api-key`; anything else is refused with Anthropic's 401. */
  key: string
  requests: Array<{ path: string, headers: IncomingMessage['headers'], body: Record<string, unknown> }>
}

/**
 * A real HTTP server speaking Anthropic's Messages API: checks `x-api-key` and
 * `anthropic-version`, answers JSON or the SSE event stream (with a tool call when the request
 * offers tools and its last turn brings no tool result), and reports usage with prompt-cache reads and writes.
 */
export async function fakeAnthropic (t: Test, key = 'sk-ant-test'): Promise<FakeAnthropic> {
  const fake: FakeAnthropic = { url: '', key, requests: [] }
  const usage = { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 30, output_tokens: 7 }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? ''
      const body = (() => { try { return JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown> } catch { return {} } })()
      fake.requests.push({ path, headers: req.headers, body })
      const error = (status: number, type: string, message: string) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ type: 'error', error: { type, message } }))
      }
      if (req.headers['x-api-key'] !== fake.key) return error(401, 'authentication_error', 'invalid x-api-key')
      if (typeof req.headers['anthropic-version'] !== 'string') return error(400, 'invalid_request_error', 'anthropic-version header is required')
      if (path !== '/v1/messages') return error(404, 'not_found_error', `no route ${path}`)
      const model = String(body['model'])
      // A tool is called when offered, unless the last turn brings a tool's result.
      const last = (body['messages'] as Array<{ content?: unknown }> | undefined)?.at(-1)?.content
      const answered = Array.isArray(last) && last.some((block: { type?: string }) => block.type === 'tool_result')
      const tool = Array.isArray(body['tools']) && body['tools'].length > 0 && !answered ? (body['tools'][0] as { name: string }).name : undefined
      if (body['stream'] !== true) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({
          id: 'msg_1', type: 'message', role: 'assistant', model, stop_reason: tool === undefined ? 'end_turn' : 'tool_use', stop_sequence: null, usage,
          content: tool === undefined ? [{ type: 'text', text: 'Hello from Claude' }] : [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_1', name: tool, input: { city: 'Paris' } }]
        }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const ev = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
      ev('message_start', { message: { id: 'msg_2', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } })
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
      ev('ping', {})
      for (const piece of ['Hello ', 'from ', 'Claude']) ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } })
      ev('content_block_stop', { index: 0 })
      if (tool !== undefined) {
        ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_2', name: tool, input: {} } })
        for (const part of ['{"city"', ': "Par', 'is"}']) ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: part } })
        ev('content_block_stop', { index: 1 })
      }
      ev('message_delta', { delta: { stop_reason: tool === undefined ? 'end_turn' : 'tool_use', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } })
      ev('message_stop', {})
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return fake
}

export interface FakeGemini {
  url: string
  /** The key it accepts in `x-goog-api-key`; anything else is refused as Google refuses a bad key. */
  key: string
  requests: Array<{ path: string, query: string, headers: IncomingMessage['headers'], body: Record<string, unknown> }>
}

/**
 * A real HTTP server speaking Gemini's generateContent API (JSON, and SSE with alt=sse), usage with
 * thoughts and cache; it calls the first declared function unless the last turn answers a call.
 * Also `:embedContent` and `:batchEmbedContents` (3-value embeddings, no usage, as Google answers).
 */
export async function fakeGemini (t: Test, key = 'AIza-test-key'): Promise<FakeGemini> {
  const fake: FakeGemini = { url: '', key, requests: [] }
  const usageMetadata = { promptTokenCount: 40, cachedContentTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 8, totalTokenCount: 53 }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const [path = '', query = ''] = (req.url ?? '').split('?')
      const body = (() => { try { return JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown> } catch { return {} } })()
      fake.requests.push({ path, query, headers: req.headers, body })
      if (req.headers['x-goog-api-key'] !== fake.key) {
        res.writeHead(400, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }] } }))
        return
      }
      const m = /^\/v1beta\/models\/([^:]+):(generateContent|streamGenerateContent|embedContent|batchEmbedContents)$/.exec(path)
      if (m === null) {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { code: 404, message: `no route ${path}`, status: 'NOT_FOUND' } }))
        return
      }
      if (m[2] === 'embedContent' || m[2] === 'batchEmbedContents') {
        const requests = m[2] === 'embedContent' ? [body] : (body['requests'] as Array<Record<string, unknown>> | undefined) ?? []
        const status = requests.every((r) => m[2] === 'embedContent' || r['model'] === `models/${m[1]}`) ? 200 : 400
        res.writeHead(status, { 'content-type': 'application/json' })
        if (status === 400) res.end(JSON.stringify({ error: { code: 400, message: 'requests[].model must be the model of the URL', status: 'INVALID_ARGUMENT' } }))
        else res.end(JSON.stringify(m[2] === 'embedContent' ? { embedding: { values: [0.1, 0.2, 0.3] } } : { embeddings: requests.map((_, i) => ({ values: [i, 0.5, 0.25] })) }))
        return
      }
      const declared = ((body['tools'] as Array<{ functionDeclarations?: Array<{ name: string }> }> | undefined) ?? [])[0]?.functionDeclarations?.[0]?.name
      const contents = (body['contents'] as Array<{ parts?: Array<Record<string, unknown>> }> | undefined) ?? []
      const call = declared !== undefined && contents.at(-1)?.parts?.some((p) => 'functionResponse' in p) !== true ? declared : undefined
      const candidate = (text: string, finish?: string) => ({
        content: { role: 'model', parts: [{ text }, ...(finish !== undefined && call !== undefined ? [{ functionCall: { name: call, args: { city: 'Paris' } } }] : [])] },
        index: 0,
        ...(finish === undefined ? {} : { finishReason: finish })
      })
      if (m[2] === 'generateContent') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ candidates: [candidate('Hello from Gemini', 'STOP')], usageMetadata, modelVersion: m[1] }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const pieces = ['Hello ', 'from ', 'Gemini']
      pieces.forEach((p, i) => {
        const last = i === pieces.length - 1
        res.write(`data: ${JSON.stringify({ candidates: [candidate(p, last ? 'STOP' : undefined)], ...(last ? { usageMetadata } : {}), modelVersion: m[1] })}\r\n\r\n`)
      })
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return fake
}
