import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import OpenAI from 'openai'
import { rateKey } from '@modelgate/quota'
import t from 'tap'
import { buildGateway, fakeOpenAI, reload, secondGateway, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

type Answer = { status: number, retryAfter: string | null, body: { error?: { message: string, code: string | null } } }

async function post (base: string, key: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Answer> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal
  })
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() as Answer['body'] }
}

const chat = (over: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...over })

/** Polls `check` until it holds or `ms` pass. */
async function until (check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return await check()
}

t.test('a token holding 1.5 times one request\'s cost admits exactly one of many concurrent requests, across gateways', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const other = await secondGateway(t, env)
  const upstream = await fakeOpenAI(t, { delayMs: 100 })
  const user = await seedUser(app.db)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  await reload(other.app)
  // One request's reservation, read off its usage event: prompt estimate + max_tokens at the price.
  const body = chat({ max_tokens: 20_000 })
  const rich = await seedToken(app.db, user.id)
  t.equal((await post(url, rich.key, body)).status, 200)
  const [event] = await usageEvents(app)
  const cost = event!.reserved
  t.ok(cost > 500, `the reservation (${cost}) is the estimate, above PreConsumedQuota`)

  const { key } = await seedToken(app.db, user.id, { remain: Math.floor(cost * 1.5) })
  const results = await Promise.all(Array.from({ length: 30 }, async (_, i) => await post(i % 2 === 0 ? url : other.url, key, body)))
  t.equal(results.filter((r) => r.status === 200).length, 1, 'exactly one admitted')
  const refused = results.filter((r) => r.status !== 200)
  t.ok(refused.every((r) => r.status === 403 && r.body.error?.message === 'Insufficient API key quota'), 'the rest refused for quota')

  // PreConsumedQuota is a floor, not an addition: 616 covers a small request whose estimate is below 500.
  const small = await seedToken(app.db, user.id, { remain: 616 })
  t.equal((await post(url, small.key, chat())).status, 200, 'a balance that covers the request with a margin admits it')
})

t.test('a user\'s concurrency limit holds across gateways and is given back on finish, error and client abort', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const other = await secondGateway(t, env)
  const upstream = await fakeOpenAI(t, { delayMs: 1500 })
  const user = await seedUser(app.db, { concurrency: 2 })
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  await reload(other.app)

  const results = await Promise.all(Array.from({ length: 8 }, async (_, i) => await post(i % 2 === 0 ? url : other.url, key, chat())))
  t.equal(results.filter((r) => r.status === 200).length, 2, 'two in flight at most, whichever gateway')
  const refused = results.filter((r) => r.status !== 200)
  t.equal(refused.length, 6)
  t.ok(refused.every((r) => r.status === 429 && r.body.error?.code === 'concurrency_limit_exceeded' && r.retryAfter === '1'))
  t.equal(refused[0]?.body.error?.message, 'The upstream load of group default is saturated; please retry later', 'the SPEC\'s message')
  t.equal(upstream.requests.length, 2, 'refused requests never reached the upstream')
  // Both gateways publish onto one queue: drain the other's buffer, then read the queue once.
  await other.app.usagePublisher.drain()
  t.equal((await usageEvents(app)).length, 2, 'and left no usage event')

  // Finished: both leases come back (the lease time is a minute; within seconds only the release
  // can have done it). The release follows the answer, so the next requests may have to wait a moment.
  upstream.behaviour = {}
  t.ok(await until(async () => (await Promise.all([post(url, key, chat()), post(other.url, key, chat())])).every((r) => r.status === 200)),
    'finished requests gave their leases back')

  // An upstream error ends the request: its lease comes back too.
  upstream.behaviour = { failWith: { status: 500 } }
  const failed = await Promise.all([post(url, key, chat()), post(other.url, key, chat())])
  t.same(failed.map((r) => r.status), [500, 500])
  upstream.behaviour = {}
  t.ok(await until(async () => (await Promise.all([post(url, key, chat()), post(url, key, chat())])).every((r) => r.status === 200)), 'failed requests gave their leases back')

  // A client that leaves mid-stream.
  upstream.behaviour = { chunks: 200, chunkDelayMs: 50 }
  const aborts = [new AbortController(), new AbortController()]
  const streams = await Promise.all(aborts.map(async (a) => await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(chat({ stream: true })), signal: a.signal
  })))
  t.same(streams.map((s) => s.status), [200, 200])
  t.equal((await post(other.url, key, chat())).status, 429, 'two streams in flight fill the limit')
  for (const a of aborts) a.abort()
  upstream.behaviour = {}
  t.ok(await until(async () => (await post(other.url, key, chat())).status === 200), 'aborted streams gave their leases back')
})

/** A free TCP port on 127.0.0.1. */
async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => { resolve(port) })
    })
  })
}

t.test('the leases of a gateway killed mid-request lapse after RELAY_LEASE_TTL_MS; live ones are renewed', async (t) => {
  const { app, url, env } = await buildGateway(t, { RELAY_LEASE_TTL_MS: '1500' })
  const upstream = await fakeOpenAI(t, { delayMs: 60_000 })
  const user = await seedUser(app.db, { concurrency: 1 })
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)

  const port = await freePort()
  const child = spawn(process.execPath, [new URL('../dist/server.js', import.meta.url).pathname], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', MIGRATE_ON_START: 'false' },
    stdio: 'ignore'
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const childUrl = `http://127.0.0.1:${port}`
  t.ok(await until(async () => (await fetch(`${childUrl}/healthz`).then((r) => r.status, () => 0)) === 200, 30_000), 'the second gateway process is up')

  // The killed gateway's request holds the user's one slot.
  void fetch(`${childUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(chat()) }).catch(() => {})
  t.ok(await until(async () => upstream.requests.length === 1), 'its request reached the upstream')
  upstream.behaviour = {}
  await new Promise((resolve) => setTimeout(resolve, 2000))
  t.equal((await post(url, key, chat())).status, 429, 'a live request is renewed past its lease time')
  child.kill('SIGKILL')
  const killedAt = Date.now()
  t.ok(await until(async () => (await post(url, key, chat())).status === 200, 15_000), 'the killed gateway\'s lease lapsed')
  t.ok(Date.now() - killedAt < 10_000, `free again ${Date.now() - killedAt} ms after the kill`)
})

t.test('per-token requests per minute, tokens per minute and concurrency across gateways, answered 429 with Retry-After', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const other = await secondGateway(t, env)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  await reload(other.app)

  const rpm = await seedToken(app.db, user.id, { rpm: 3 })
  const answers: Answer[] = []
  for (let i = 0; i < 5; i++) answers.push(await post(i % 2 === 0 ? url : other.url, rpm.key, chat()))
  t.same(answers.map((a) => a.status), [200, 200, 200, 429, 429], 'three a minute, whichever gateway')
  const refusal = answers[3]!
  t.equal(refusal.body.error?.code, 'rate_limit_exceeded')
  t.match(refusal.body.error?.message, /^This API key may make 3 requests per minute; retry in \d+ s$/)
  const wait = Number(refusal.retryAfter)
  t.ok(Number.isInteger(wait) && wait >= 1 && wait <= 120, `Retry-After: ${refusal.retryAfter}`)
  t.ok(refusal.body.error?.message.endsWith(`retry in ${wait} s`), 'the message and the header agree')
  const another = await seedToken(app.db, user.id, { rpm: 3 })
  t.equal((await post(url, another.key, chat())).status, 200, 'each token has its own window')

  // Tokens per minute: the upstream reports 16 tokens per answer (12 + 4); the prompt is
  // estimated at 7 at admission and corrected to what was used once the request has ended.
  const tpm = await seedToken(app.db, user.id, { tpm: 40 })
  const counted = async () => {
    const [cur, prev] = await app.redis.hmget(rateKey(user.id, tpm.row.id), 't', 'pt')
    return Number(cur ?? 0) + Number(prev ?? 0)
  }
  const tpmAnswers: number[] = []
  for (let i = 0; i < 4; i++) {
    const status = (await post(i % 2 === 0 ? url : other.url, tpm.key, chat())).status
    tpmAnswers.push(status)
    if (status === 200) t.ok(await until(async () => await counted() === 16 * (i + 1)), `${16 * (i + 1)} tokens counted once corrected`)
  }
  t.same(tpmAnswers, [200, 200, 200, 429], '16 + 16 + 16 used: 48 + 7 is past 40 tokens')
  const over = await post(url, tpm.key, chat())
  t.equal(over.body.error?.code, 'tokens_limit_exceeded')
  t.ok(Number(over.retryAfter) >= 1)

  const conc = await seedToken(app.db, user.id, { concurrency: 1 })
  upstream.behaviour = { delayMs: 1500 }
  const at = await Promise.all([post(url, conc.key, chat()), post(other.url, conc.key, chat()), post(other.url, conc.key, chat())])
  t.equal(at.filter((a) => a.status === 200).length, 1)
  const busy = at.find((a) => a.status === 429)
  t.equal(busy?.body.error?.message, 'This API key already has 1 requests in flight; please wait for one to finish')
  t.equal(busy?.retryAfter, '1')
})

t.test('a channel whose max_input_tokens the prompt exceeds is passed over', async (t) => {
  const { app, url } = await buildGateway(t)
  const small = await fakeOpenAI(t)
  const large = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: small.url, models: ['gpt-4o-mini'], priority: 10, maxInputTokens: 100 })
  await seedChannel(app.db, { baseUrl: large.url, models: ['gpt-4o-mini'], priority: 0, maxInputTokens: 0 })
  await reload(app)
  const long = 'The quick brown fox jumps over the lazy dog. '.repeat(50)
  t.equal((await post(url, key, chat())).status, 200)
  t.equal(small.requests.length, 1, 'a short prompt goes to the preferred channel')
  t.equal((await post(url, key, chat({ messages: [{ role: 'user', content: long }] }))).status, 200)
  t.equal(small.requests.length, 1, 'a long one does not')
  t.equal(large.requests.length, 1, 'it goes to the channel that takes it')

  await app.db.updateTable('channels').set({ max_input_tokens: 100 }).execute()
  await reload(app)
  const refused = await post(url, key, chat({ messages: [{ role: 'user', content: long }] }))
  t.equal(refused.status, 400, 'no channel takes it: the client is told why')
  t.equal(refused.body.error?.code, 'context_length_exceeded')
  t.match(refused.body.error?.message, /^The prompt \(about \d+ tokens\) is longer than any channel for model gpt-4o-mini accepts \(at most 100\)$/)
})

t.test('when every channel of the group answers 429 the client is told the group is saturated', async (t) => {
  const { app, url } = await buildGateway(t)
  await app.db.insertInto('options').values({ key: 'RetryTimes', value: '2' }).execute()
  const a = await fakeOpenAI(t, { failWith: { status: 429 } })
  const b = await fakeOpenAI(t, { failWith: { status: 429 } })
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: a.url, models: ['gpt-4o-mini'] })
  await seedChannel(app.db, { baseUrl: b.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const res = await post(url, key, chat())
  t.equal(res.status, 429)
  t.same(res.body.error && { message: res.body.error.message, code: res.body.error.code }, { message: 'The upstream load of group default is saturated; please retry later', code: 'upstream_saturated' })
  t.equal(a.requests.length + b.requests.length, 2, 'both were tried')
  t.equal(res.retryAfter, '1', 'with Retry-After')
})

t.test('a multi-key channel with one dead key keeps serving from the others and sets only that key aside', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t, { deadKeys: ['sk-dead'] })
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const ch = await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'], key: 'sk-live-1\nsk-dead\nsk-live-2', multiKeyMode: 'polling' })
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  for (let i = 0; i < 6; i++) {
    const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
    t.equal(answer.choices[0]?.message.content, 'Hello there!', `request ${i + 1} answered`)
  }
  const used = upstream.requests.map((r) => r.headers.authorization)
  t.equal(used.filter((a) => a === 'Bearer sk-dead').length, 1, 'the dead key was tried once, then set aside')
  t.ok(used.includes('Bearer sk-live-1') && used.includes('Bearer sk-live-2'), 'polling used both live keys')
  const row = await app.db.selectFrom('channels').select(['status', 'key_states']).where('id', '=', ch.id).executeTakeFirstOrThrow()
  t.equal(row.status, 1, 'the channel stays enabled')
  const states = Object.values(row.key_states)
  t.equal(states.length, 1)
  t.match(states[0], { status: 3, reason: /401/, last_error: /401/ }, 'only the dead key is auto-disabled, with its reason')
  t.equal((await usageEvents(app)).filter((e) => e.outcome === 'success').length, 6)

  // Every key dead: the channel is disabled as a whole.
  upstream.behaviour = { deadKeys: ['sk-live-1', 'sk-dead', 'sk-live-2'] }
  const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(chat()) })
  t.equal(res.status, 502, 'every key refused: all upstream channels failed')
  t.ok(await until(async () => (await app.db.selectFrom('channels').select('status').where('id', '=', ch.id).executeTakeFirstOrThrow()).status === 3), 'auto-disabled once no key is left')
})

t.test('parameter and header overrides reach the upstream after model mapping', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, {
    baseUrl: upstream.url,
    models: ['gpt-4o-mini'],
    key: 'sk-upstream',
    modelMapping: { 'gpt-4o-mini': 'mapped-model' },
    paramOverride: JSON.stringify({ temperature: 0.2, model: 'overridden-model', metadata: { team: 'a' } }),
    headerOverride: JSON.stringify({ 'X-Team': 'blue', Authorization: 'Bearer {api_key}-suffix' })
  })
  await reload(app)
  t.equal((await post(url, key, chat({ temperature: 1 }))).status, 200)
  const seen = upstream.requests[0]!
  const body = JSON.parse(seen.body.toString()) as Record<string, unknown>
  t.match(body, { model: 'overridden-model', temperature: 0.2, metadata: { team: 'a' }, messages: [{ role: 'user', content: 'hi' }] })
  t.equal(seen.headers['x-team'], 'blue')
  t.equal(seen.headers.authorization, 'Bearer sk-upstream-suffix', 'the {api_key} placeholder is the channel key')
})
