import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import t from 'tap'
import { buildGateway, fakeAnthropic, fakeOpenAI, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

t.test('an Anthropic client is served by an OpenAI channel, streamed and not, billed on the upstream\'s usage', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const client = new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 })

  const message = await client.messages.create({
    model: 'gpt-4o-mini', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }]
  })
  t.match(message, { type: 'message', role: 'assistant', model: 'gpt-4o-mini', stop_reason: 'end_turn', content: [{ type: 'text', text: 'Hello there!' }] })
  t.equal(message.usage.input_tokens, 12)
  t.equal(message.usage.output_tokens, 4)
  const sent = JSON.parse(upstream.requests[0]!.body.toString()) as Record<string, unknown>
  t.match(sent, { model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] }, 'the upstream got a chat request')

  const stream = client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: 'count' }] })
  const deltas: string[] = []
  stream.on('text', (text) => { deltas.push(text) })
  const final = await stream.finalMessage()
  t.same(deltas, ['word0 ', 'word1 ', 'word2 '], 'text arrives as the upstream streams it')
  t.match(final, { stop_reason: 'end_turn', content: [{ type: 'text', text: 'word0 word1 word2 ' }] })
  t.equal(final.usage.output_tokens, 6)

  const events = await usageEvents(app)
  t.match(events.filter((e) => !e.is_stream), [{ model_name: 'gpt-4o-mini', prompt_tokens: 12, completion_tokens: 4, usage_source: 'upstream', outcome: 'success' }])
  t.match(events.filter((e) => e.is_stream), [{ model_name: 'gpt-4o-mini', prompt_tokens: 11, completion_tokens: 6, usage_source: 'upstream', outcome: 'success' }])

  // Claude Code and older SDKs send the key as x-api-key.
  const viaHeader = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
  })
  t.equal(viaHeader.status, 200)
  t.match(await viaHeader.json(), { type: 'message', content: [{ type: 'text', text: 'Hello there!' }] })

  const listed = await client.models.list()
  t.same(listed.data.map((m) => ({ type: m.type, id: m.id })), [{ type: 'model', id: 'gpt-4o-mini' }], 'the model list in Anthropic\'s shape')

  const counted = await client.messages.countTokens({ model: 'gpt-4o-mini', system: 'Be brief.', messages: [{ role: 'user', content: 'How many tokens is this?' }] })
  t.ok(counted.input_tokens > 6 && counted.input_tokens < 40, `count_tokens: ${counted.input_tokens}`)
})

t.test('refusals reach Anthropic clients in Anthropic\'s error shape', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id, { remain: 1 })
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const ask = async (apiKey: string, model = 'gpt-4o-mini') =>
    await new Anthropic({ apiKey, baseURL: url, maxRetries: 0 }).messages.create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (err: unknown) => err)

  const wrongKey = await ask('sk-nosuchkey00000000000000000000000000')
  t.ok(wrongKey instanceof Anthropic.AuthenticationError, 'the SDK raises its own authentication error')
  t.match((wrongKey as InstanceType<typeof Anthropic.APIError>).error, { type: 'error', error: { type: 'authentication_error', message: 'Invalid API key' } })

  const poor = await ask(key)
  t.ok(poor instanceof Anthropic.PermissionDeniedError)
  t.match((poor as InstanceType<typeof Anthropic.APIError>).error, { type: 'error', error: { type: 'permission_error', message: 'Insufficient API key quota' } })

  const res = await fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{"model": ' })
  t.equal(res.status, 400)
  t.match(await res.json(), { type: 'error', error: { type: 'invalid_request_error', message: /not valid JSON/ } })
  t.equal(upstream.requests.length, 0)
})

t.test('a Claude channel: Anthropic clients pass through, OpenAI clients are converted, cache reads and writes billed at their ratios', async (t) => {
  const { app, url } = await buildGateway(t)
  const claude = await fakeAnthropic(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values([
    { key: 'ModelRatio', value: JSON.stringify({ 'claude-sonnet-4-5': 1.5 }) },
    { key: 'CompletionRatio', value: JSON.stringify({ 'claude-sonnet-4-5': 5 }) },
    { key: 'CacheRatio', value: JSON.stringify({ 'claude-sonnet-4-5': 0.1 }) }
  ]).execute()
  await seedChannel(app.db, { type: 14, baseUrl: claude.url, key: claude.key, models: ['claude-sonnet-4-5'] })
  await reload(app)

  const anthropic = new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'prompt-caching-2024-07-31' } })
  const tools = [{ name: 'weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }]
  const message = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 200, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] })
  t.match(message, { stop_reason: 'tool_use', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', name: 'weather', input: { city: 'Paris' } }] })
  const passed = claude.requests[0]!
  t.same(passed.body, { model: 'claude-sonnet-4-5', max_tokens: 200, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] }, 'the body passed through as the client sent it')
  t.equal(passed.headers['anthropic-beta'], 'prompt-caching-2024-07-31', 'beta headers pass through')
  t.equal(passed.headers['x-api-key'], claude.key, 'the channel key, not the relay key')

  const final = await anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 200, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] }).finalMessage()
  t.match(final, { stop_reason: 'tool_use', content: [{ type: 'text', text: 'Hello from Claude' }, { type: 'tool_use', name: 'weather', input: { city: 'Paris' } }] })

  const openai = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const chat = await openai.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] })
  t.equal(chat.choices[0]?.message.content, 'Hello from Claude')
  t.equal(chat.usage?.prompt_tokens, 150, 'input + cache reads + cache writes')
  t.equal(chat.usage?.completion_tokens, 7)
  const converted = claude.requests[2]!.body
  t.match(converted, { model: 'claude-sonnet-4-5', system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user' }] }, 'the OpenAI request became a Messages request')
  t.type(converted['max_tokens'], 'number', 'with the max_tokens Anthropic requires')

  let text = ''
  let usage: OpenAI.CompletionUsage | undefined
  for await (const chunk of await openai.chat.completions.create({ model: 'claude-sonnet-4-5', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] })) {
    text += chunk.choices[0]?.delta.content ?? ''
    if (chunk.usage) usage = chunk.usage
  }
  t.equal(text, 'Hello from Claude')
  t.match(usage, { prompt_tokens: 150, completion_tokens: 7 })

  const events = await usageEvents(app)
  t.equal(events.length, 4)
  // 20 new prompt tokens, 30 written to the cache at the default CreateCacheRatio (1.25), 100 read
  // at 0.1, 7 out at 5; model ratio 1.5.
  const expected = Math.round((20 + 30 * 1.25 + 100 * 0.1 + 7 * 5) * 1.5)
  for (const e of events) {
    t.match(e, { prompt_tokens: 150, cached_tokens: 100, cache_write_tokens: 30, completion_tokens: 7, quota: expected, usage_source: 'upstream', channel_id: Number })
    t.match(e.price, { cache_ratio: 0.1, create_cache_ratio: 1.25 }, 'the log shows the ratios used')
  }
})

t.test('a Claude channel with a wrong key is refused by the upstream and disabled, and Anthropic errors keep their type', async (t) => {
  const { app, url } = await buildGateway(t)
  const claude = await fakeAnthropic(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values({ key: 'ModelRatio', value: JSON.stringify({ 'claude-sonnet-4-5': 1.5 }) }).execute()
  const ch = await seedChannel(app.db, { type: 14, baseUrl: claude.url, key: 'sk-ant-wrong', models: ['claude-sonnet-4-5'] })
  await reload(app)
  const err = await new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 }).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
    .then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof Anthropic.APIError)
  t.match((err as InstanceType<typeof Anthropic.APIError>).error, { type: 'error', error: { type: String, message: /^The upstream provider failed to answer \(request id: [0-9a-f-]{36}\)$/ } },
    'the channel\'s own failure: a generic message with the request id, not the upstream\'s words')
  t.notMatch(JSON.stringify((err as InstanceType<typeof Anthropic.APIError>).error), /x-api-key|authentication_error/)
  const row = await app.db.selectFrom('channels').select('status').where('id', '=', ch.id).executeTakeFirstOrThrow()
  t.equal(row.status, 3, 'the channel was auto-disabled on the upstream\'s authentication_error')
})
