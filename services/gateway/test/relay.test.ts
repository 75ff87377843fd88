import { type UsageBatch } from '@modelgate/contracts'
import { Queue } from 'bullmq'
import { httpTestProxy, socksTestProxy } from '@modelgate/testing'
import { countTokens } from 'gpt-tokenizer'
import OpenAI, { toFile } from 'openai'
import t from 'tap'
import { approxCounter } from '../src/relay/estimate.js'
import { buildGateway, fakeOpenAI, reload, seedChannel, seedToken, seedUser, USAGE_QUEUE, usageEvents } from './fixtures.js'

const MODELS = ['gpt-4o-mini', 'text-embedding-3-small', 'dall-e-3', 'tts-1', 'whisper-1', 'omni-moderation-latest', 'gpt-4.1-mini']

t.test('the official OpenAI client works for chat, streaming, embeddings, images, audio, moderations and responses', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: MODELS, key: 'sk-upstream-secret' })
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })

  const chat = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], temperature: 0.2, user: 'kept' } as OpenAI.ChatCompletionCreateParamsNonStreaming)
  t.equal(chat.choices[0]?.message.content, 'Hello there!')
  t.equal(chat.usage?.total_tokens, 16)
  const sent = JSON.parse(upstream.requests.at(-1)!.body.toString())
  t.equal(sent.user, 'kept', 'unknown and optional fields pass through')
  t.equal(upstream.requests.at(-1)!.headers.authorization, 'Bearer sk-upstream-secret', 'the channel key goes upstream, not the client key')

  const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Count' }], stream: true })
  let text = ''
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
  t.equal(text, 'word0 word1 word2 ')
  const streamed = JSON.parse(upstream.requests.at(-1)!.body.toString())
  t.same(streamed.stream_options, { include_usage: true }, 'usage is requested upstream')

  const emb = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world' })
  t.same(emb.data[0]?.embedding.map((x) => Math.round(x * 10) / 10), [0.1, 0.2, 0.3])
  const img = await client.images.generate({ model: 'dall-e-3', prompt: 'a cat' })
  t.equal(img.data?.[0]?.url, 'https://images.example/1.png')
  const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello' })
  t.same([...new Uint8Array(await speech.arrayBuffer())], [0x49, 0x44, 0x33, 0x04, 0x00, 0xff], 'binary audio comes back byte for byte')
  const tr = await client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(Buffer.from('RIFFfakeaudio'), 'a.wav') })
  t.equal(tr.text, 'transcribed words here')
  t.match(upstream.requests.at(-1)!.headers['content-type'], /^multipart\/form-data; boundary=/)
  const mod = await client.moderations.create({ model: 'omni-moderation-latest', input: 'fine text' })
  t.equal(mod.results[0]?.flagged, false)
  const resp = await client.responses.create({ model: 'gpt-4.1-mini', input: 'Hi' })
  t.equal(resp.output_text, 'Hi from responses')

  const models = await client.models.list()
  t.same(models.data.map((m) => m.id).sort(), [...MODELS].sort(), '/v1/models lists what this key may use')
  t.equal((await client.models.retrieve('gpt-4o-mini')).id, 'gpt-4o-mini')

  const events = await usageEvents(app)
  t.equal(events.length, 8, 'one usage event per request')
  const byModel = Object.fromEntries(events.map((e) => [e.is_stream ? `${e.model_name}:stream` : e.model_name, e]))
  t.match(byModel['gpt-4o-mini'], { prompt_tokens: 12, completion_tokens: 4, usage_source: 'upstream', outcome: 'success', quota: Math.round((12 + 4 * 4) * 0.075) })
  t.match(byModel['gpt-4o-mini:stream'], { prompt_tokens: 11, completion_tokens: 6, usage_source: 'upstream', outcome: 'success', is_stream: true })
  t.ok(byModel['gpt-4o-mini:stream']!.first_response_ms > 0)
  t.match(byModel['dall-e-3'], { quota: 0.04 * 500_000, outcome: 'success' })
  t.equal(byModel['text-embedding-3-small']?.prompt_tokens, 5)
  for (const e of events) t.equal(e.user_id, user.id)
})

t.test("a channel's proxy carries its upstream calls, streamed or not; a dead proxy fails over", async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const http = await httpTestProxy(t, 'gw:pw')
  const socks = await socksTestProxy(t)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'], proxyUrl: http.url })
  await seedChannel(app.db, { baseUrl: upstream.url.replace('127.0.0.1', 'localhost'), models: ['gpt-4.1-mini'], proxyUrl: socks.url.replace('socks5:', 'socks5h:') })
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o'], proxyUrl: 'http://127.0.0.1:1', priority: 10 })
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o'], name: 'direct' })
  await app.db.insertInto('options').values({ key: 'RetryTimes', value: '1' }).execute()
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  for (const model of ['gpt-4o-mini', 'gpt-4.1-mini']) {
    const chat = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })
    t.equal(chat.choices[0]?.message.content, 'Hello there!', `${model}: answered`)
    let text = ''
    for await (const chunk of await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Count' }], stream: true })) text += chunk.choices[0]?.delta.content ?? ''
    t.equal(text, 'word0 word1 word2 ', `${model}: streamed whole`)
  }
  const port = new URL(upstream.url).port
  t.same(http.targets, [`${upstream.url}/v1/chat/completions`, `${upstream.url}/v1/chat/completions`], 'both calls of the HTTP-proxied channel went through it, with its credentials')
  t.ok(socks.targets.length >= 1 && socks.targets.every((target) => target === `localhost:${port}`), 'the SOCKS channel connected through its proxy, by host name')
  t.equal(upstream.requests.length, 4)
  const failover = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
  t.equal(failover.choices[0]?.message.content, 'Hello there!', 'a proxy that cannot be reached is an upstream failure: the next channel answers')
  const events = await usageEvents(app)
  t.equal(events.length, 5)
  t.equal(events.find((e) => e.model_name === 'gpt-4o')!.retried_channels.length, 1, 'the proxied channel was tried first')
})

t.test('50 concurrent requests on a token holding quota for one are admitted once', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t, { delayMs: 50 })
  const user = await seedUser(app.db)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  // The reservation of one request: its estimate is below PreConsumedQuota (500), the floor.
  const { key } = await seedToken(app.db, user.id, { remain: 700 })
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 })
  const results = await Promise.all(Array.from({ length: 50 }, async () => {
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body })
    return { status: res.status, body: await res.json() as { error?: { message: string } } }
  }))
  t.equal(results.filter((r) => r.status === 200).length, 1, 'exactly one admitted')
  const refused = results.filter((r) => r.status !== 200)
  t.equal(refused.length, 49)
  t.ok(refused.every((r) => r.status === 403 && r.body.error?.message === 'Insufficient API key quota'))
  t.equal(upstream.requests.length, 1, 'the upstream saw one request')
  t.equal((await usageEvents(app)).length, 1)
})

t.test('fails over on 500, 429 and timeouts, and disables a channel answering 401 when auto_ban is on', async (t) => {
  const { app, url } = await buildGateway(t, { UPSTREAM_TIMEOUT_MS: '1000' })
  await app.db.insertInto('options').values({ key: 'RetryTimes', value: '3' }).execute()
  const bad = await fakeOpenAI(t, { failWith: { status: 500 } })
  const good = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const badCh = await seedChannel(app.db, { baseUrl: bad.url, models: ['gpt-4o-mini'], priority: 10, name: 'bad' })
  const goodCh = await seedChannel(app.db, { baseUrl: good.url, models: ['gpt-4o-mini'], priority: 0, name: 'good' })
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const ask = async () => await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })

  for (const behaviour of [{ failWith: { status: 500 } }, { failWith: { status: 429 } }, { delayMs: 5000 }]) {
    bad.behaviour = behaviour
    const before = { bad: bad.requests.length, good: good.requests.length }
    t.equal((await ask()).choices[0]?.message.content, 'Hello there!', `answered despite ${JSON.stringify(behaviour)}`)
    t.equal(bad.requests.length, before.bad + 1, 'the higher priority channel was tried first')
    t.equal(good.requests.length, before.good + 1, 'then the next tier answered')
  }
  const events = await usageEvents(app)
  t.equal(events.length, 3)
  t.ok(events.every((e) => e.channel_id === goodCh.id && e.retried_channels.includes(badCh.id) && e.outcome === 'success'))

  bad.behaviour = { failWith: { status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } } }
  t.equal((await ask()).choices[0]?.message.content, 'Hello there!')
  const row = await app.db.selectFrom('channels').select(['status', 'other_info']).where('id', '=', badCh.id).executeTakeFirstOrThrow()
  t.equal(row.status, 3, 'auto-disabled')
  t.match(row.other_info, { status_reason: /401/, status_time: Number })
  const before = bad.requests.length
  await ask()
  t.equal(bad.requests.length, before, 'a disabled channel is not tried again')

  const log = await app.db.selectFrom('logs').select(['type', 'content']).where('channel_id', '=', badCh.id).execute()
  t.match(log, [{ type: 4, content: /auto-disabled/ }], 'the auto-disable is logged')
})

t.test('client errors pass through without retry, and a failure everywhere is one clear error', async (t) => {
  const { app, url } = await buildGateway(t)
  await app.db.insertInto('options').values({ key: 'RetryTimes', value: '2' }).execute()
  const a = await fakeOpenAI(t, { failWith: { status: 400, body: { error: { message: 'max_tokens is too large', type: 'invalid_request_error', code: null } } } })
  const b = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: a.url, models: ['gpt-4o-mini'], priority: 5, statusCodeMapping: { 400: '422' } })
  await seedChannel(app.db, { baseUrl: b.url, models: ['gpt-4o-mini'], priority: 1 })
  await reload(app)
  const post = async () => await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }) })
  const res = await post()
  t.equal(res.status, 422, 'status_code_mapping rewrites what the client sees')
  t.same(await res.json(), { error: { message: 'max_tokens is too large', type: 'invalid_request_error', code: null } }, 'the upstream own error object reaches the client')
  t.equal(b.requests.length, 0, 'no retry for the client\'s own mistake')

  a.behaviour = { failWith: { status: 503 } }
  b.behaviour = { failWith: { status: 502 } }
  const all = await post()
  t.equal(all.status, 502)
  t.match(await all.json(), { error: { message: /^The upstream provider failed to answer \(request id: [0-9a-f-]{36}\)$/, type: 'upstream_error', code: 'upstream_error' } })

  const events = await usageEvents(app)
  t.equal(events.length, 2, 'every admitted request yields exactly one event')
  t.ok(events.every((e) => e.outcome === 'failed' && e.quota === 0), 'failures bill nothing and release the reservation')
})

t.test('without upstream usage the bill is an exact token count; the reservation only an estimate', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t, { noUsage: true })
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const prompt = 'function add (a, b) { return a + b } // 请把这个函数翻译成 Python'
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: prompt }], max_tokens: 50 })
  t.equal(answer.choices[0]?.message.content, 'Hello there!')
  const [event] = await usageEvents(app)
  // Chat framing: 3 per message and 3 for the reply, as the estimate counts it.
  const exactPrompt = 3 + countTokens('Be brief.') + 3 + countTokens(prompt) + 3
  t.match(event, { usage_source: 'counted', outcome: 'success', prompt_tokens: exactPrompt, completion_tokens: countTokens('Hello there!') })
  t.equal(event!.quota, Math.round((exactPrompt + countTokens('Hello there!') * 4) * 0.075), 'billed on the exact counts')
  const estimate = 3 + approxCounter('Be brief.') + 3 + approxCounter(prompt) + 3
  t.equal(event!.reserved, Math.max(Math.round((estimate + 50 * 4) * 0.075), 500), 'reserved on the estimate and max_tokens, PreConsumedQuota a floor')
})

t.test('a long stream without usage is counted in slices while it flows, and reaches the client whole', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t, { noUsage: true, chunks: 2500 })
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  let text = ''
  for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'count' }] })) {
    text += chunk.choices[0]?.delta.content ?? ''
  }
  const expected = Array.from({ length: 2500 }, (_, i) => `word${i} `).join('')
  t.equal(text, expected, 'every word, in order')
  const [event] = await usageEvents(app)
  t.match(event, { usage_source: 'counted', outcome: 'success' })
  // Counted slice by slice (about 64 KB of events each): a slice boundary may split what one
  // count of the whole text would merge, so the sum is within a hair of it.
  const whole = countTokens(expected)
  t.ok(Math.abs(event!.completion_tokens - whole) <= whole * 0.01, `${event!.completion_tokens} tokens counted, ${whole} for the whole text at once`)
})

t.test('closing the gateway answers the request in flight, publishes its event and lets its connection go', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t, { noUsage: true, delayMs: 300 })
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const queue = new Queue(USAGE_QUEUE, { connection: app.usagePublisher.queue.opts.connection, prefix: app.usagePublisher.queue.opts.prefix })
  t.teardown(async () => { await queue.close() })
  const pending = fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'late' }] })
  })
  await new Promise((resolve) => setTimeout(resolve, 100))
  const started = Date.now()
  await Promise.all([app.close(), pending.then(async (res) => { t.equal(res.status, 200, 'the request in flight is answered') })])
  // The client keeps its connection alive; closing must not wait for the 72 s keep-alive timeout.
  t.ok(Date.now() - started < 5_000, `closed ${Date.now() - started} ms after the signal`)
  const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized'])
  const events = jobs.flatMap((j) => (j.data as UsageBatch).events)
  t.equal(events.length, 1, 'its usage event reached the queue before the connection closed')
  t.match(events[0], { usage_source: 'counted', outcome: 'success' })
})

t.test('a client leaving mid-stream cancels the upstream and bills the streamed part once', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t, { chunks: 200, chunkDelayMs: 20 })
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const controller = new AbortController()
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', signal: controller.signal,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'long story' }] })
  })
  const reader = res.body!.getReader()
  let received = ''
  while ((received.match(/word/g) ?? []).length < 5) received += new TextDecoder().decode((await reader.read()).value)
  controller.abort()
  await upstream.closedEarly
  t.pass('the upstream connection was closed by the gateway')
  let events = await usageEvents(app)
  for (let i = 0; i < 50 && events.length === 0; i++) { await new Promise((r) => setTimeout(r, 50)); events = await usageEvents(app) }
  t.equal(events.length, 1, 'one usage event')
  t.match(events[0], { outcome: 'aborted', usage_source: 'counted', is_stream: true })
  t.ok(events[0]!.completion_tokens >= 5 && events[0]!.completion_tokens < 200, `billed the ${events[0]!.completion_tokens} streamed tokens`)
  t.ok(events[0]!.quota > 0)
})

t.test('an upstream that dies mid-stream ends the client\'s stream with an error event', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t, { chunks: 10, dieAfter: 3, chunkDelayMs: 20 })
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'x' }] })
  })
  const text = await res.text()
  t.match(text, /word2/)
  t.match(text, /"code":"stream_interrupted"/)
  t.notMatch(text, /\[DONE\]/, 'no clean finish')
  const events = await usageEvents(app)
  t.match(events, [{ outcome: 'aborted' }])
})

t.test('the client\'s stream ends with the upstream\'s [DONE], not when the upstream gets round to closing', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t, { chunks: 4, holdAfterDoneMs: 1500 })
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const started = performance.now()
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'x' }] })
  })
  const text = await res.text()
  const took = performance.now() - started
  t.ok(took < 1000, `the answer ended after ${Math.round(took)} ms, before the upstream's body (1,500 ms)`)
  t.match(text, /word3[\s\S]*"usage":\{"prompt_tokens":11,"completion_tokens":8[\s\S]*data: \[DONE\]\n\n$/)
  const events = await usageEvents(app)
  t.match(events, [{ outcome: 'success', usage_source: 'upstream', prompt_tokens: 11, completion_tokens: 8 }], 'billed once the upstream ended, from its usage')
})

t.test('token and user checks each answer with their own message', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const banned = await seedUser(app.db)
  await app.db.updateTable('users').set({ status: 2 }).where('id', '=', banned.id).execute()
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini', 'gpt-4.1-mini'] })
  await app.db.insertInto('options').values({ key: 'ModelRatio', value: '{"gpt-4o-mini":0.075}' }).execute()
  await reload(app)
  const call = async (key: string | undefined, model = 'gpt-4o-mini', headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] })
    })
    return { status: res.status, error: (await res.json() as { error?: { message: string, code: string } }).error }
  }
  t.match(await call(undefined), { status: 401, error: { message: /No API key provided/ } })
  t.match(await call('sk-notarealkeyatall'), { status: 401, error: { message: 'Invalid API key' } })
  t.match(await call((await seedToken(app.db, user.id, { status: 2 })).key), { status: 401, error: { message: 'This API key has been disabled' } })
  t.match(await call((await seedToken(app.db, user.id, { expired: 1000 })).key), { status: 401, error: { message: 'This API key has expired' } })
  t.match(await call((await seedToken(app.db, user.id, { remain: 0 })).key), { status: 403, error: { message: 'This API key has used up its quota' } })
  t.match(await call((await seedToken(app.db, user.id, { allowIps: '10.0.0.0/8\n192.168.1.1' })).key), { status: 403, error: { code: 'ip_not_allowed' } })
  t.equal((await call((await seedToken(app.db, user.id, { allowIps: '127.0.0.0/8' })).key)).status, 200, 'a CIDR allow list admits its addresses')
  t.match(await call((await seedToken(app.db, user.id, { modelLimits: 'gpt-4.1-mini' })).key), { status: 403, error: { message: 'This API key may not use the model gpt-4o-mini' } })
  t.match(await call((await seedToken(app.db, banned.id)).key), { status: 403, error: { message: 'The user of this API key has been banned' } })
  const { key } = await seedToken(app.db, user.id)
  t.match(await call(key, 'no-such-model'), { status: 404, error: { code: 'model_not_found', message: 'The model no-such-model does not exist or is not available in group default' } })
  t.match(await call(key, 'gpt-4.1-mini'), { status: 403, error: { code: 'model_not_priced' } })
  t.match(await call(key, 'gpt-4o-mini', { 'accept-language': 'zh-CN' }).then((r) => r), { status: 200 })
  t.match(await call('sk-notarealkeyatall', 'gpt-4o-mini', { 'accept-language': 'zh-CN' }), { error: { message: '无效的令牌' } })
  for (const h of [{ 'x-api-key': key }, { 'x-goog-api-key': key }] as Array<Record<string, string>>) {
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...h }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }) })
    t.equal(res.status, 200, `key accepted from ${Object.keys(h)[0]}`)
  }
  const q = await fetch(`${url}/v1/chat/completions?key=${key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }) })
  t.equal(q.status, 200, 'key accepted from ?key=')

  const bad = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"model": "gpt-4o-mini", messages' })
  t.equal(bad.status, 400)
  t.match(await bad.json(), { error: { type: 'invalid_request_error', code: 'invalid_json', message: /^The request body is not valid JSON/ } })
  const noModel = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"messages":[]}' })
  t.match(await noModel.json(), { error: { code: 'missing_model' } })
})

t.test('a pinned channel is refused to a normal user and honoured for an admin', async (t) => {
  const { app, url } = await buildGateway(t)
  const a = await fakeOpenAI(t)
  const b = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const admin = await seedUser(app.db, { role: 10 })
  await seedChannel(app.db, { baseUrl: a.url, models: ['gpt-4o-mini'], priority: 10 })
  const chB = await seedChannel(app.db, { baseUrl: b.url, models: ['gpt-4o-mini'], priority: 0 })
  await reload(app)
  const call = async (key: string) => await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}-${chB.id}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }) })
  const refused = await call((await seedToken(app.db, user.id)).key)
  t.equal(refused.status, 403)
  t.match(await refused.json(), { error: { code: 'channel_pin_not_allowed' } })
  const ok = await call((await seedToken(app.db, admin.id)).key)
  t.equal(ok.status, 200)
  t.equal(b.requests.length, 1, 'the pinned (lower priority) channel answered')
  t.equal(a.requests.length, 0)
})

t.test('a console change reaches a running gateway in under a second', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const call = async () => (await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }) })).status
  t.equal(await call(), 404, 'no channel yet')
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  const { Redis } = await import('ioredis')
  const pub = new Redis(env.REDIS_URL!)
  t.teardown(() => { pub.disconnect() })
  const started = Date.now()
  await pub.publish(`${env.REDIS_KEY_PREFIX}config:changed`, JSON.stringify({ kind: 'channel' }))
  let status = 0
  while (Date.now() - started < 1000 && status !== 200) {
    status = await call()
    if (status !== 200) await new Promise((r) => setTimeout(r, 25))
  }
  t.equal(status, 200, `the new channel answered ${Date.now() - started} ms after the announcement`)

  await app.db.updateTable('users').set({ status: 2 }).where('id', '=', user.id).execute()
  const { tokenCacheKey } = await import('@modelgate/contracts')
  const { tokenKeyHash } = await import('@modelgate/service')
  await pub.del(`${env.REDIS_KEY_PREFIX}${tokenCacheKey(tokenKeyHash(key))}`)
  const banAt = Date.now()
  await pub.publish(`${env.REDIS_KEY_PREFIX}config:changed`, JSON.stringify({ kind: 'user', id: user.id }))
  while (Date.now() - banAt < 1000 && status === 200) {
    status = await call()
    if (status === 200) await new Promise((r) => setTimeout(r, 25))
  }
  t.equal(status, 403, 'a banned user is refused within a second')
})

t.test('the console playground streams for a signed-in user and bills the user', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const { loadControlPlaneConfig } = await import('@modelgate/config')
  const { default: controlPlane } = await import('@modelgate/control-plane')
  const Fastify = (await import('fastify')).default
  const cp = Fastify()
  await cp.register(controlPlane, { config: loadControlPlaneConfig(env) })
  await cp.ready()
  t.teardown(() => cp.close())
  const login = await cp.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: '123456' } })
  const cookie = [login.headers['set-cookie']].flat().find((c) => c?.startsWith('session='))!.split(';')[0]!
  const userId = String(login.json().data.id)
  const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, group: 'default', max_tokens: 0, temperature: 0.5, messages: [{ role: 'user', content: 'hi' }] })
  const res = await fetch(`${url}/pg/chat/completions`, { method: 'POST', headers: { cookie, 'new-api-user': userId, 'content-type': 'application/json' }, body })
  t.equal(res.status, 200)
  t.match(await res.text(), /word0[\s\S]*\[DONE\]/)
  t.notOk('group' in JSON.parse(upstream.requests.at(-1)!.body.toString()), 'the console-only group field is not sent upstream')
  const events = await usageEvents(app)
  t.match(events, [{ user_id: Number(userId), token_id: 0, token_name: 'playground', unlimited_token: true, outcome: 'success' }])
  const noHeader = await fetch(`${url}/pg/chat/completions`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body })
  t.equal(noHeader.status, 401, 'the CSRF header is required')
  const noCookie = await fetch(`${url}/pg/chat/completions`, { method: 'POST', headers: { 'new-api-user': userId, 'content-type': 'application/json' }, body })
  t.equal(noCookie.status, 401)

  // Signed out at the control plane: refused here by the session's row, even once Redis forgot its marker.
  t.equal((await cp.inject({ url: '/api/user/logout', headers: { cookie, 'new-api-user': userId } })).json().success, true)
  const { revokedSessionKey } = await import('@modelgate/contracts')
  const jti = (JSON.parse(Buffer.from(cookie.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti
  await app.redis.del(revokedSessionKey(jti))
  const afterLogout = await fetch(`${url}/pg/chat/completions`, { method: 'POST', headers: { cookie, 'new-api-user': userId, 'content-type': 'application/json' }, body })
  t.equal(afterLogout.status, 401, 'a signed-out session cannot use the playground')
})

t.test('a streamed Responses API call reaches the OpenAI client with its usage billed', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4.1-mini'] })
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const stream = await client.responses.create({ model: 'gpt-4.1-mini', input: 'Hi', stream: true })
  let text = ''
  const types: string[] = []
  for await (const ev of stream) {
    types.push(ev.type)
    if (ev.type === 'response.output_text.delta') text += ev.delta
  }
  t.equal(text, 'Hi there')
  t.same(types, ['response.created', 'response.output_text.delta', 'response.output_text.delta', 'response.completed'])
  t.match(await usageEvents(app), [{ is_stream: true, outcome: 'success', prompt_tokens: 7, completion_tokens: 2, cached_tokens: 3, usage_source: 'upstream' }])
})

t.test('audio tokens are billed at the model\'s audio ratios and recorded for the log', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t, {
    usage: {
      prompt_tokens: 1000, completion_tokens: 300, total_tokens: 1300,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 400 },
      completion_tokens_details: { audio_tokens: 200 }
    }
  })
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-audio-preview'] })
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  await client.chat.completions.create({ model: 'gpt-4o-audio-preview', messages: [{ role: 'user', content: 'say hi' }] })
  // Default prices: ratio 1.25, completion 4, audio 16 (input), audio completion 2 (output vs audio input).
  const expected = Math.round(1.25 * (600 + 400 * 16 + 100 * 4 + 200 * 16 * 2))
  t.match(await usageEvents(app), [{
    prompt_tokens: 1000, completion_tokens: 300, audio_prompt_tokens: 400, audio_completion_tokens: 200, quota: expected,
    price: { model_ratio: 1.25, completion_ratio: 4, audio_ratio: 16, audio_completion_ratio: 2 }
  }])
})

t.test('sensitive words, the per-IP limit and an unreachable quota store are refused in OpenAI\'s format', async (t) => {
  const { app, url } = await buildGateway(t, { RELAY_RATE_LIMIT_PER_MINUTE: '5' })
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await app.db.insertInto('options').values([
    { key: 'CheckSensitiveEnabled', value: 'true' },
    { key: 'CheckSensitiveOnPromptEnabled', value: 'true' },
    { key: 'SensitiveWords', value: 'forbidden thing\nsecret plan' }
  ]).execute()
  await reload(app)
  const post = async (content: string) => await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }) })
  const bad = await post('tell me the Secret Plan')
  t.equal(bad.status, 400)
  t.match(await bad.json(), { error: { code: 'sensitive_words_detected' } })
  t.equal(upstream.requests.length, 0, 'nothing reached the upstream')
  t.equal((await post('harmless')).status, 200)
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) statuses.push((await post('harmless')).status)
  t.same(statuses, [200, 200, 200, 429], 'the sixth request within a minute is refused')

  const { app: app2, url: url2 } = await buildGateway(t)
  const user2 = await seedUser(app2.db)
  const tok2 = await seedToken(app2.db, user2.id)
  await seedChannel(app2.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app2)
  app2.redis.disconnect()
  const down = await fetch(`${url2}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${tok2.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }) })
  t.equal(down.status, 503, 'fails closed without Redis')
  t.match(await down.json(), { error: { code: 'quota_store_unavailable' } })
})

t.test('per-user model request limits hold across gateways', async (t) => {
  const { app, url, env } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await app.db.insertInto('options').values([
    { key: 'ModelRequestRateLimitEnabled', value: 'true' },
    { key: 'ModelRequestRateLimitDurationMinutes', value: '1' },
    { key: 'ModelRequestRateLimitSuccessCount', value: '2' }
  ]).execute()
  await reload(app)
  const Fastify = (await import('fastify')).default
  const { loadGatewayConfig } = await import('@modelgate/config')
  const { default: gateway } = await import('../src/app.js')
  const other = Fastify()
  await other.register(gateway, { config: loadGatewayConfig(env) })
  await other.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => other.close())
  const otherUrl = `http://127.0.0.1:${(other.server.address() as { port: number }).port}`
  const post = async (base: string) => await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }) })
  t.equal((await post(url)).status, 200)
  t.equal((await post(otherUrl)).status, 200)
  const third = await post(url)
  t.equal(third.status, 429, 'the third answered request within the window is refused, whichever gateway takes it')
  t.match(await third.json(), { error: { code: 'rate_limit_exceeded', message: 'You have reached the limit of 2 requests in 1 minutes; please wait' } })
  const wait = Number(third.headers.get('retry-after'))
  t.ok(wait >= 1 && wait <= 60, `Retry-After says when the window ends (${wait} s)`)
})
