import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'
import type { UsageEvent } from '@modelgate/contracts'
import { type Database, type Kysely, redisSettlement, settleUsageBatch } from '@modelgate/db'
import { QuotaStore } from '@modelgate/quota'
import { countTokens } from 'gpt-tokenizer'
import t, { type Test } from 'tap'
import { buildGateway, fakeOpenAI, reload, seedChannel, seedToken, seedUser, setOptions, usageEvents } from './fixtures.js'

const tick = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it holds or `ms` pass. */
async function until (check: () => Promise<boolean> | boolean, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await tick(20)
  }
  return await check()
}

/** Settles as the billing worker does: Postgres (idempotent by request id), then Redis. */
async function settle (db: Kysely<Database>, quota: QuotaStore, events: readonly UsageEvent[]): Promise<void> {
  await settleUsageBatch(db, events, { writeLog: true })
  await quota.settleMany(events.map(redisSettlement))
}

const chunk = (i: number, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: finish === null ? { content: `word${i} ` } : {}, finish_reason: finish }] })}\n\n`

/**
 * An HTTP upstream driven by `handle`; records each request's arrival and the moment its
 * connection closed before the answer was finished (the gateway cancelling it).
 */
async function scripted (t: Test, handle: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>) {
  const seen = { requests: 0, cancelledAt: [] as number[] }
  const server = createHttpServer((req, res) => {
    seen.requests++
    res.on('close', () => { if (!res.writableFinished) seen.cancelledAt.push(Date.now()) })
    req.resume()
    req.on('end', () => { void handle(req, res) })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

/** A TCP server that accepts connections and never says a word. */
async function silentTcp (t: Test) {
  const sockets = new Set<Socket>()
  const server = createTcpServer((s) => { sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s)) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A port nothing listens on (connection refused). */
async function refusedUrl (): Promise<string> {
  const server = createTcpServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}

function request (url: string, key: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal === undefined ? {} : { signal })
  })
}

const streamBody = { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'tell me a long story' }] }

t.test('REL-33 client aborts a stream: after 20 of 100 chunks, and before the first byte, both settled once as aborted', async (t) => {
  const { app, url } = await buildGateway(t, { UPSTREAM_TIMEOUT_MS: '10000' })
  const upstream = await fakeOpenAI(t, { chunks: 100, chunkDelayMs: 50 })
  const backup = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key, row: token } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'], priority: 10 })
  await seedChannel(app.db, { baseUrl: backup.url, models: ['gpt-4o-mini'], priority: 0 })
  await app.db.insertInto('options').values({ key: 'RetryTimes', value: '3' }).execute()
  await reload(app)
  const quota = new QuotaStore(app.redis)

  const controller = new AbortController()
  const res = await request(url, key, streamBody, controller.signal)
  const reader = res.body!.getReader()
  let received = ''
  while ((received.match(/word\d+ /g) ?? []).length < 20) received += new TextDecoder().decode((await reader.read()).value)
  const abortedAt = Date.now()
  controller.abort()
  await Promise.race([upstream.closedEarly, tick(3000)])
  const cancelMs = Date.now() - abortedAt
  t.ok(cancelMs < 1000, `the upstream call was cancelled ${cancelMs} ms after the abort`)
  t.ok(await until(async () => (await usageEvents(app)).length === 1), 'one usage event')
  await tick(300)
  const [event] = await usageEvents(app)
  t.equal(backup.requests.length, 0, 'no retry to another channel after the abort')
  t.match(event, { outcome: 'aborted', is_stream: true, usage_source: 'counted', retried_channels: [] })
  t.ok(event!.prompt_tokens > 0, 'the prompt is billed')
  const words = (received.match(/word\d+ /g) ?? []).join('')
  const seen = countTokens(words)
  t.ok(event!.completion_tokens >= seen && event!.completion_tokens <= seen + 15,
    `${event!.completion_tokens} completion tokens billed for the ${seen} the client received (and at most a few in flight)`)
  t.ok(event!.quota > 0)
  await settle(app.db, quota, [event!])
  t.same(await quota.openReservations(), [], 'the reservation is released')
  const pg = await app.db.selectFrom('tokens').select('remain_quota').where('id', '=', token.id).executeTakeFirstOrThrow()
  t.equal(await quota.balance('token', token.id, token.user_id), pg.remain_quota, 'settled once: Redis agrees with Postgres')
  const logs = await app.db.selectFrom('logs').select(['quota', 'other']).where('request_id', '=', event!.request_id).execute()
  t.equal(logs.length, 1, 'exactly one settlement')
  t.match(logs[0], { quota: event!.quota, other: { outcome: 'aborted' } })

  // Before the first byte: the upstream takes the call and says nothing yet.
  const slow = await scripted(t, () => {})
  await app.db.updateTable('channels').set({ base_url: slow.url }).where('base_url', '=', upstream.url).execute()
  await reload(app)
  const early = new AbortController()
  const pending = request(url, key, streamBody, early.signal).catch((err: unknown) => err)
  t.ok(await until(() => slow.seen.requests === 1), 'the upstream got the call')
  const earlyAt = Date.now()
  early.abort()
  await pending
  t.ok(await until(() => slow.seen.cancelledAt.length === 1, 1000), 'the upstream observed the abort within 1 s')
  t.ok(await until(async () => (await usageEvents(app)).length === 2), 'one usage event for the early abort')
  await tick(300)
  t.ok(slow.seen.cancelledAt[0]! - earlyAt < 1000)
  t.equal(backup.requests.length, 0, 'no retry after an abort before the first byte either')
  const second = (await usageEvents(app)).find((e) => e.request_id !== event!.request_id)!
  t.match(second, { outcome: 'aborted', completion_tokens: 0, quota: 0 }, 'aborted, as after some chunks; nothing billed: no completion, and (the chosen policy) no prompt')
  t.notOk('error' in second!, 'not logged as a failure')
  await settle(app.db, quota, [second])
  const earlyLog = await app.db.selectFrom('logs').select(['quota', 'other']).where('request_id', '=', second.request_id).execute()
  t.match(earlyLog, [{ quota: 0, other: { outcome: 'aborted' } }], 'its log says aborted')
  t.same(await quota.openReservations(), [], 'its reservation is released')
  const after = await app.db.selectFrom('tokens').select('remain_quota').where('id', '=', token.id).executeTakeFirstOrThrow()
  t.equal(after.remain_quota, pg.remain_quota, 'the token balance is unchanged by the early abort')
  t.equal(await quota.balance('token', token.id, token.user_id), after.remain_quota)
})

t.test('REL-34 failover across channels: 503, refused, disabled and healthy channels; 400, 401 and 429', async (t) => {
  // Channels A (priority 10, returns 503), B (priority 10, connection refused), C (priority 0,
  // healthy), D disabled; RetryTimes = 3. 100 requests: all served by C; each log lists attempted
  // channels without duplicates and never D; a client 400 (e.g. context too long) is not retried;
  // a 401 from A auto-disables A when auto_ban is on; a single 429 does not disable; no retry once
  // the first byte was sent to the client; total attempts never exceed RetryTimes + 1.
  const { app, url } = await buildGateway(t)
  const quota = new QuotaStore(app.redis)
  await app.db.insertInto('options').values({ key: 'RetryTimes', value: '3' }).execute()
  const a = await fakeOpenAI(t, { failWith: { status: 503 } })
  const c = await fakeOpenAI(t)
  const d = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const chA = await seedChannel(app.db, { baseUrl: a.url, models: ['gpt-4o-mini'], priority: 10, name: 'A' })
  const chB = await seedChannel(app.db, { baseUrl: await refusedUrl(), models: ['gpt-4o-mini'], priority: 10, name: 'B' })
  const chC = await seedChannel(app.db, { baseUrl: c.url, models: ['gpt-4o-mini'], priority: 0, name: 'C' })
  const chD = await seedChannel(app.db, { baseUrl: d.url, models: ['gpt-4o-mini'], priority: 20, name: 'D' })
  await app.db.updateTable('channels').set({ status: 2 }).where('id', '=', chD.id).execute()
  await reload(app)
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }

  const statuses: number[] = []
  for (let round = 0; round < 10; round++) {
    statuses.push(...await Promise.all(Array.from({ length: 10 }, async () => (await request(url, key, body).then(async (r) => { await r.text(); return r })).status)))
  }
  t.equal(statuses.filter((s) => s === 200).length, 100, 'all 100 served')
  const events = await usageEvents(app)
  t.equal(events.length, 100)
  t.ok(events.every((e) => e.channel_id === chC.id && e.outcome === 'success'), 'all by C')
  t.ok(events.every((e) => new Set(e.retried_channels).size === e.retried_channels.length), 'attempted channels listed without duplicates')
  t.ok(events.every((e) => [...e.retried_channels].sort((x, y) => x - y).join() === [chA.id, chB.id].sort((x, y) => x - y).join()),
    'each lists A and B, never D')
  t.ok(events.every((e) => e.retried_channels.length + 1 <= 4), 'attempts never exceed RetryTimes + 1')
  t.equal(a.requests.length, 100, 'A tried once per request')
  t.equal(c.requests.length, 100)
  t.equal(d.requests.length, 0, 'the disabled channel is never tried')
  // The log rows, once settled: use_channel is the channels attempted, each once, the serving one last.
  const useChannel = async (requestIds: string[]) => (await app.db.selectFrom('logs').select('other').where('request_id', 'in', requestIds).execute())
    .map((l) => (l.other as { admin_info: { use_channel: number[] } }).admin_info.use_channel)
  await settle(app.db, quota, events)
  const used = await useChannel(events.map((e) => e.request_id))
  t.equal(used.length, 100, 'one log row per request')
  t.ok(used.every((u) => u.length === 3 && new Set(u).size === 3 && u.includes(chA.id) && u.includes(chB.id) && u[2] === chC.id),
    'each log lists A and B, then C, each once')
  t.ok(used.every((u) => !u.includes(chD.id)), 'never D')

  // Every channel failing: the client hears the last failure, and the log lists each channel attempted once.
  c.behaviour = { failWith: { status: 503 } }
  const failed = await request(url, key, body)
  t.equal(failed.status, 503)
  t.match(await failed.json(), { error: { type: 'upstream_error' } })
  const failedEvent = (await usageEvents(app)).find((e) => !events.some((s) => s.request_id === e.request_id))!
  t.match(failedEvent, { outcome: 'failed', channel_id: chC.id, error: { status: 503 } })
  await settle(app.db, quota, [failedEvent])
  const [failedUse] = await useChannel([failedEvent.request_id])
  t.same([...failedUse!].sort((x, y) => x - y), [chA.id, chB.id, chC.id].sort((x, y) => x - y), 'the failed request lists A, B and C')
  t.equal(failedUse!.at(-1), chC.id, 'the last tried last')
  c.behaviour = {}

  // A single 429 does not disable.
  a.behaviour = { failWith: { status: 429 } }
  const before429 = a.requests.length
  t.equal((await request(url, key, body)).status, 200)
  t.equal(a.requests.length, before429 + 1)
  t.equal((await app.db.selectFrom('channels').select('status').where('id', '=', chA.id).executeTakeFirstOrThrow()).status, 1, 'a 429 leaves A enabled')

  // A 401 from A auto-disables it (auto_ban on).
  a.behaviour = { failWith: { status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } } }
  t.equal((await request(url, key, body)).status, 200, 'the request is still served')
  t.equal((await app.db.selectFrom('channels').select('status').where('id', '=', chA.id).executeTakeFirstOrThrow()).status, 3, 'A auto-disabled')
  const afterBan = a.requests.length
  t.equal((await request(url, key, body)).status, 200)
  t.equal(a.requests.length, afterBan, 'and no longer tried')

  // A client 400 (context too long) is not retried.
  const e = await fakeOpenAI(t, { failWith: { status: 400, body: { error: { message: "This model's maximum context length is 128000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } } } })
  const f = await fakeOpenAI(t)
  await seedChannel(app.db, { baseUrl: e.url, models: ['gpt-4.1-mini'], priority: 10 })
  await seedChannel(app.db, { baseUrl: f.url, models: ['gpt-4.1-mini'], priority: 0 })
  await reload(app)
  const res = await request(url, key, { ...body, model: 'gpt-4.1-mini' })
  t.equal(res.status, 400)
  t.match(await res.json(), { error: { code: 'context_length_exceeded' } })
  t.equal(e.requests.length, 1)
  t.equal(f.requests.length, 0, 'not retried on another channel')

  // No retry once the first byte reached the client: the stream dies after 2 chunks.
  const g = await fakeOpenAI(t, { chunks: 10, dieAfter: 2, chunkDelayMs: 20 })
  const h = await fakeOpenAI(t)
  await seedChannel(app.db, { baseUrl: g.url, models: ['gpt-4o'], priority: 10 })
  await seedChannel(app.db, { baseUrl: h.url, models: ['gpt-4o'], priority: 0 })
  await reload(app)
  const text = await (await request(url, key, { ...streamBody, model: 'gpt-4o' })).text()
  t.match(text, /word1/)
  t.match(text, /stream_interrupted/)
  t.equal(h.requests.length, 0, 'no retry after the first byte was sent')

  // Five failing channels: RetryTimes + 1 = 4 attempts, no more, each listed once.
  const many = await fakeOpenAI(t, { failWith: { status: 503 } })
  const manyIds: number[] = []
  for (let i = 0; i < 5; i++) manyIds.push((await seedChannel(app.db, { baseUrl: many.url, models: ['gpt-4.1-nano'], priority: i })).id)
  await reload(app)
  const seen = new Set((await usageEvents(app)).map((e) => e.request_id))
  const capped = await request(url, key, { ...body, model: 'gpt-4.1-nano' })
  t.equal(capped.status, 503)
  t.equal(many.requests.length, 4, 'total attempts are RetryTimes + 1')
  const cappedEvent = (await usageEvents(app)).find((e) => !seen.has(e.request_id))!
  await settle(app.db, quota, [cappedEvent])
  const [cappedUse] = await useChannel([cappedEvent.request_id])
  t.same(cappedUse, manyIds.slice(1).reverse(), 'the four attempted, highest priority first, each once')
})

t.test('REL-35 timeouts and truncation: silent TCP, stalled headers, stall mid-stream, close without [DONE]', async (t) => {
  // (a) accepts TCP then never answers, (b) sends headers then stalls before the first chunk,
  // (c) stalls mid-stream, (d) closes mid-stream without [DONE]/finish_reason. Expected: (a)(b)
  // fail over after the first-byte timeout (and when no channel is left: 504 upstream_timeout);
  // (c)(d) the client receives an SSE error event (never a clean end that looks complete), the
  // log marks the request incomplete, and it settles what was streamed; total latency never
  // exceeds attempts x per-try timeout.
  const FIRST = 1000
  const IDLE = 3000
  const { app, url } = await buildGateway(t, { UPSTREAM_FIRST_BYTE_TIMEOUT_MS: String(FIRST), UPSTREAM_TIMEOUT_MS: String(IDLE) })
  await app.db.insertInto('options').values({ key: 'RetryTimes', value: '1' }).execute()
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const backup = await fakeOpenAI(t)
  const quota = new QuotaStore(app.redis)

  // (a) accepts TCP, never answers; (b) headers, then nothing.
  const silent = await silentTcp(t)
  const headersOnly = await scripted(t, (_req, res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.flushHeaders() })
  // (c) three chunks, then a stall; (d) three chunks, then a clean close without finish_reason or [DONE].
  const stall = await scripted(t, (_req, res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); for (let i = 0; i < 3; i++) res.write(chunk(i)) })
  const cut = await scripted(t, (_req, res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); for (let i = 0; i < 3; i++) res.write(chunk(i)); res.end() })
  // Streams that take longer than both timeouts in all, a chunk every 500 ms; a whole answer that takes longer than the first-byte timeout.
  const longStream = await fakeOpenAI(t, { chunks: 7, chunkDelayMs: 500 })
  const slowWhole = await fakeOpenAI(t, { delayMs: FIRST + 500 })
  const variants = [
    { name: 'a', model: 'm-a', url: silent },
    { name: 'b', model: 'm-b', url: headersOnly.url },
    { name: 'c', model: 'm-c', url: stall.url },
    { name: 'd', model: 'm-d', url: cut.url }
  ]
  const ids: Record<string, number> = {}
  for (const v of variants) {
    ids[v.name] = (await seedChannel(app.db, { baseUrl: v.url, models: [v.model, `${v.model}-whole`], priority: 10, name: v.name })).id
    await seedChannel(app.db, { baseUrl: backup.url, models: [v.model, `${v.model}-whole`], priority: 0, modelMapping: { [v.model]: 'gpt-4o-mini', [`${v.model}-whole`]: 'gpt-4o-mini' } })
  }
  // No channel left after them: (b) alone, and (a) then (b).
  const bAlone = (await seedChannel(app.db, { baseUrl: headersOnly.url, models: ['m-b-alone'], name: 'b alone' })).id
  const aFirst = (await seedChannel(app.db, { baseUrl: silent, models: ['m-ab'], priority: 10, name: 'a first' })).id
  const bThen = (await seedChannel(app.db, { baseUrl: headersOnly.url, models: ['m-ab'], priority: 0, name: 'b then' })).id
  await seedChannel(app.db, { baseUrl: longStream.url, models: ['m-long'] })
  await seedChannel(app.db, { baseUrl: slowWhole.url, models: ['m-slow-whole'] })
  const models = ['m-a', 'm-b', 'm-c', 'm-d', 'm-a-whole', 'm-b-whole', 'm-b-alone', 'm-ab', 'm-long', 'm-slow-whole']
  await setOptions(app.db, { ModelRatio: Object.fromEntries(models.map((m) => [m, 0.075])) })
  await reload(app)

  for (const v of variants.slice(0, 2)) {
    const started = Date.now()
    const res = await request(url, key, { ...streamBody, model: v.model })
    const text = await res.text()
    const took = Date.now() - started
    t.equal(res.status, 200, `(${v.name}) answered`)
    t.match(text, /word2/, `(${v.name}) by the backup, whole`)
    t.match(text, /\[DONE\]/)
    t.ok(took >= FIRST * 0.9 && took < 2 * FIRST, `(${v.name}) failed over after the first-byte timeout, not UPSTREAM_TIMEOUT_MS: ${took} ms, within attempts x per-try timeout`)
  }

  // No channel left: 504 upstream_timeout, never 429 upstream_saturated; the log says the same.
  const failures: Record<string, { status: number, body: { error: { message: string, type: string, code: string } } }> = {}
  for (const [model, attempts] of [['m-b-alone', 1], ['m-ab', 2]] as const) {
    const started = Date.now()
    const res = await request(url, key, { ...streamBody, model })
    failures[model] = { status: res.status, body: await res.json() as { error: { message: string, type: string, code: string } } }
    const took = Date.now() - started
    t.equal(res.status, 504, `(${model}) a gateway timeout`)
    t.match(failures[model]!.body, { error: { type: 'upstream_error', code: 'upstream_timeout', message: /timed out/ } }, `(${model}) in OpenAI's shape`)
    t.ok(took >= attempts * FIRST * 0.9 && took < attempts * FIRST + 1000, `(${model}) ${attempts} attempt(s) of the first-byte timeout: ${took} ms`)
  }

  // Non-streamed: no first-byte timeout (a whole answer comes when it is made); UPSTREAM_TIMEOUT_MS bounds each wait.
  const slow = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm-slow-whole', messages: [{ role: 'user', content: 'x' }] }) })
  t.equal(slow.status, 200, 'a whole answer slower than the first-byte timeout is served by its channel')
  t.match(await slow.json(), { choices: [{ message: { content: 'Hello there!' } }] })
  t.equal(slowWhole.requests.length, 1)
  for (const v of variants.slice(0, 2)) {
    const before = backup.requests.length
    const started = Date.now()
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: `${v.model}-whole`, messages: [{ role: 'user', content: 'x' }] }) })
    const took = Date.now() - started
    t.equal(res.status, 200, `(${v.name}, not streamed) failed over to the backup`)
    await res.text()
    t.equal(backup.requests.length, before + 1)
    t.ok(took >= IDLE * 0.9 && took < 2 * IDLE + 1000, `(${v.name}, not streamed) after UPSTREAM_TIMEOUT_MS: ${took} ms`)
  }

  // A stream longer in all than both timeouts, a chunk every 500 ms, is relayed whole.
  const longStarted = Date.now()
  const longText = await (await request(url, key, { ...streamBody, model: 'm-long' })).text()
  t.ok(Date.now() - longStarted > IDLE, 'the long stream took longer than UPSTREAM_TIMEOUT_MS in all')
  t.match(longText, /word6[\s\S]*"finish_reason":"stop"[\s\S]*\[DONE\]/, 'and reached its end')
  t.notMatch(longText, /stream_interrupted/)

  for (const v of variants.slice(2)) {
    const before = backup.requests.length
    const started = Date.now()
    const res = await request(url, key, { ...streamBody, model: v.model })
    const text = await res.text()
    const took = Date.now() - started
    t.equal(res.status, 200)
    t.match(text, /word2/, `(${v.name}) the streamed part reached the client`)
    t.match(text, /"code":"stream_interrupted"/, `(${v.name}) then an SSE error event`)
    t.notMatch(text, /\[DONE\]/, `(${v.name}) never a clean end`)
    t.notMatch(text, /"finish_reason":"stop"/)
    t.equal(backup.requests.length, before, `(${v.name}) no retry after the first byte`)
    t.ok(took < IDLE + 2000, `(${v.name}) ended in ${took} ms: a stall mid-stream is bounded by UPSTREAM_TIMEOUT_MS`)
  }
  t.equal(stall.seen.cancelledAt.length, 1, '(c) the stalled upstream call was closed')

  const events = await usageEvents(app)
  t.equal(events.length, models.length, 'one usage event per request')
  const by = (model: string) => events.find((e) => e.model_name === model)!
  for (const name of ['a', 'b']) {
    t.match(by(`m-${name}`), { outcome: 'success', usage_source: 'upstream' }, `(${name}) billed as served by the backup`)
    t.same(by(`m-${name}`).retried_channels, [ids[name]], `(${name}) the stalled channel is listed as attempted`)
    t.match(by(`m-${name}-whole`), { outcome: 'success', retried_channels: [ids[name]] })
  }
  t.match(by('m-b-alone'), { outcome: 'failed', quota: 0, channel_id: bAlone, retried_channels: [], error: { status: 504, message: 'upstream timed out' } })
  t.match(by('m-ab'), { outcome: 'failed', quota: 0, channel_id: bThen, retried_channels: [aFirst], error: { status: 504, message: 'upstream timed out' } })
  for (const model of ['m-b-alone', 'm-ab']) {
    t.equal(by(model).error!.status, failures[model]!.status, `(${model}) the log's status is the client's`)
    t.ok(failures[model]!.body.error.message.includes(by(model).error!.message), `(${model}) and so is its message`)
  }
  const streamed = countTokens('word0 word1 word2 ')
  for (const name of ['c', 'd']) {
    t.match(by(`m-${name}`), { outcome: 'aborted', usage_source: 'counted', completion_tokens: streamed, error: { message: /ended unexpectedly/ } },
      `(${name}) marked incomplete, billed the ${streamed} streamed tokens`)
    t.ok(by(`m-${name}`).prompt_tokens > 0 && by(`m-${name}`).quota > 0)
  }
  t.match(by('m-long'), { outcome: 'success', retried_channels: [] })
  await settle(app.db, quota, events)
  const logs = await app.db.selectFrom('logs').select(['model_name', 'type', 'content', 'quota', 'other']).where('model_name', 'in', ['m-c', 'm-d', 'm-b-alone', 'm-ab']).execute()
  t.equal(logs.length, 4)
  const incomplete = logs.filter((l) => l.model_name === 'm-c' || l.model_name === 'm-d')
  t.ok(incomplete.every((l) => (l.other as { outcome?: string }).outcome === 'aborted' && l.quota === by(l.model_name).quota), 'the logs mark both incomplete, with what was streamed')
  const useChannel = (model: string) => (logs.find((l) => l.model_name === model)!.other as { admin_info: { use_channel: number[] } }).admin_info.use_channel
  t.match(logs.find((l) => l.model_name === 'm-b-alone'), { type: 5, content: 'upstream timed out', other: { outcome: 'failed' } }, 'the failed request is logged as the timeout the client was told of')
  t.same(useChannel('m-b-alone'), [bAlone], 'its one channel listed once')
  t.same(useChannel('m-ab'), [aFirst, bThen], 'both channels tried, each once, in order')
  t.same(await quota.openReservations(), [])
})
