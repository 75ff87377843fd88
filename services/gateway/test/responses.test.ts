import { GoogleGenAI } from '@google/genai'
import { countTokens } from 'gpt-tokenizer'
import OpenAI from 'openai'
import type { ResponseInputItem } from 'openai/resources/responses/responses'
import t from 'tap'
import { buildGateway, fakeAnthropic, fakeGemini, fakeOpenAI, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

const tools = [{ type: 'function' as const, name: 'weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }]

/** The history of a function call round trip: the question, the model's call, the tool's output. */
function roundTrip (callId: string, name: string, args: string): ResponseInputItem[] {
  return [
    { role: 'user', content: 'Weather in Paris?' },
    { type: 'function_call', call_id: callId, name, arguments: args },
    { type: 'function_call_output', call_id: callId, output: 'Sunny, 24°C' }
  ]
}

t.test('a Responses client is served by a Claude channel: text, a function call round trip, streamed and not, billed on Claude\'s usage', async (t) => {
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
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const usage = { input_tokens: 150, input_tokens_details: { cached_tokens: 100 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 157 }

  const text = await client.responses.create({ model: 'claude-sonnet-4-5', instructions: 'Be brief.', input: 'hi', max_output_tokens: 100, store: false })
  t.match(text, { object: 'response', status: 'completed', model: 'claude-sonnet-4-5', output_text: 'Hello from Claude', instructions: 'Be brief.' })
  t.match(text.id, /^resp_/)
  t.same(text.usage, usage, 'Claude\'s tokens: input with cache reads and writes, cache reads as cached')
  t.match(claude.requests[0], { path: '/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 100, system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user' }] } }, 'Claude got a Messages request')
  t.equal(claude.requests[0]?.headers['x-api-key'], claude.key)

  const call = await client.responses.create({ model: 'claude-sonnet-4-5', input: 'Weather in Paris?', tools, tool_choice: 'auto' })
  t.match(call.output, [
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
    { type: 'function_call', call_id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}', status: 'completed' }
  ])
  t.match(claude.requests[1]?.body, { tools: [{ name: 'weather', description: 'Weather of a city', input_schema: { type: 'object' } }], tool_choice: { type: 'auto' } })

  const answered = await client.responses.create({ model: 'claude-sonnet-4-5', input: roundTrip('toolu_1', 'weather', '{"city":"Paris"}'), tools })
  t.equal(answered.output_text, 'Hello from Claude', 'the tool\'s output answered')
  t.match(claude.requests[2]?.body, {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }] }
    ]
  }, 'the function call and its output became tool_use and tool_result')
  t.match(JSON.stringify(claude.requests[2]?.body), /Sunny, 24°C/)

  // The SDK's stream helper: deltas as they come, the whole response at the end.
  const stream = client.responses.stream({ model: 'claude-sonnet-4-5', input: 'Weather in Paris?', tools })
  const deltas: string[] = []
  stream.on('response.output_text.delta', (event) => { deltas.push(event.delta) })
  const final = await stream.finalResponse()
  t.same(deltas, ['Hello ', 'from ', 'Claude'])
  t.match(final, { status: 'completed', output_text: 'Hello from Claude' })
  t.match(final.output, [
    { type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Hello from Claude' }] },
    { type: 'function_call', call_id: 'toolu_2', name: 'weather', arguments: '{"city": "Paris"}' }
  ])
  t.same(final.usage, usage)
  t.match(claude.requests[3]?.body, { stream: true })

  const types: string[] = []
  let streamedText = ''
  for await (const event of await client.responses.create({ model: 'claude-sonnet-4-5', input: roundTrip('toolu_2', 'weather', '{"city": "Paris"}'), tools, stream: true })) {
    types.push(event.type)
    if (event.type === 'response.output_text.delta') streamedText += event.delta
  }
  t.equal(streamedText, 'Hello from Claude')
  t.same(types, [
    'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
    'response.output_text.delta', 'response.output_text.delta', 'response.output_text.delta',
    'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed'
  ], 'the events in the order the Responses API sends them')

  const events = await usageEvents(app)
  t.equal(events.length, 5)
  // 20 new prompt tokens, 30 written to the cache at the default CreateCacheRatio (1.25), 100 read
  // at 0.1, 7 out at 5; model ratio 1.5.
  const expected = Math.round((20 + 30 * 1.25 + 100 * 0.1 + 7 * 5) * 1.5)
  for (const e of events) {
    t.match(e, { model_name: 'claude-sonnet-4-5', prompt_tokens: 150, cached_tokens: 100, cache_write_tokens: 30, completion_tokens: 7, quota: expected, usage_source: 'upstream', outcome: 'success' })
  }
  t.equal(events.filter((e) => e.is_stream).length, 2)
})

t.test('a Responses client is served by a Gemini channel: text, a function call round trip, streamed and not, thoughts billed', async (t) => {
  const { app, url } = await buildGateway(t)
  const gemini = await fakeGemini(t)
  const openai = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values([
    { key: 'ModelRatio', value: JSON.stringify({ 'gemini-2.5-flash': 0.15, 'gpt-4o-mini': 0.075 }) },
    { key: 'CompletionRatio', value: JSON.stringify({ 'gemini-2.5-flash': 8 }) },
    { key: 'CacheRatio', value: JSON.stringify({ 'gemini-2.5-flash': 0.25 }) }
  ]).execute()
  await seedChannel(app.db, { type: 24, baseUrl: gemini.url, key: gemini.key, models: ['gemini-2.5-flash'] })
  await seedChannel(app.db, { baseUrl: openai.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const usage = { input_tokens: 40, input_tokens_details: { cached_tokens: 10 }, output_tokens: 13, output_tokens_details: { reasoning_tokens: 8 }, total_tokens: 53 }

  const text = await client.responses.create({ model: 'gemini-2.5-flash', instructions: 'Be brief.', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], reasoning: { effort: 'low' } })
  t.match(text, { status: 'completed', output_text: 'Hello from Gemini' })
  t.same(text.usage, usage, 'thinking tokens are output tokens and reported as reasoning')
  t.match(gemini.requests[0], {
    path: '/v1beta/models/gemini-2.5-flash:generateContent',
    body: { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { thinkingConfig: { thinkingBudget: 1024 } } }
  }, 'Gemini got a generateContent request')

  const call = await client.responses.create({ model: 'gemini-2.5-flash', input: 'Weather in Paris?', tools, tool_choice: 'required' })
  const fc = call.output.find((item) => item.type === 'function_call')
  t.match(fc, { type: 'function_call', name: 'weather', arguments: '{"city":"Paris"}', call_id: String })
  t.match(gemini.requests[1]?.body, { tools: [{ functionDeclarations: [{ name: 'weather' }] }], toolConfig: { functionCallingConfig: { mode: 'ANY' } } })

  const answered = await client.responses.create({ model: 'gemini-2.5-flash', input: roundTrip(fc?.type === 'function_call' ? fc.call_id : '', 'weather', '{"city":"Paris"}'), tools })
  t.equal(answered.output_text, 'Hello from Gemini', 'the tool\'s output answered')
  t.match(gemini.requests[2]?.body, {
    contents: [
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'weather' } }] }
    ]
  }, 'the function call and its output became functionCall and functionResponse parts')

  const final = await client.responses.stream({ model: 'gemini-2.5-flash', input: 'Weather in Paris?', tools }).finalResponse()
  t.match(final, { status: 'completed', output_text: 'Hello from Gemini' })
  t.match(final.output.map((item) => item.type), ['message', 'function_call'])
  t.match(final.output[1], { name: 'weather', arguments: '{"city":"Paris"}' })
  t.same(final.usage, usage)
  t.match(gemini.requests[3], { path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent', query: /alt=sse/ })

  // Channels with the Responses API of their own get the request as it is.
  const native = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi' })
  t.equal(native.output_text, 'Hi from responses')
  t.equal(openai.requests[0]?.path, '/v1/responses')

  const events = await usageEvents(app)
  t.equal(events.length, 5)
  // 30 new prompt tokens, 10 cached at 0.25, 13 out (5 + 8 thinking) at 8; model ratio 0.15.
  const expected = Math.round((30 + 10 * 0.25 + 13 * 8) * 0.15)
  for (const e of events.filter((e) => e.model_name === 'gemini-2.5-flash')) {
    t.match(e, { prompt_tokens: 40, cached_tokens: 10, completion_tokens: 13, quota: expected, usage_source: 'upstream', outcome: 'success' })
  }
  t.match(events.find((e) => e.model_name === 'gpt-4o-mini'), { prompt_tokens: 9, completion_tokens: 5, usage_source: 'upstream' })
})

t.test('refusals reach Responses clients in OpenAI\'s error shape, and a Claude error keeps its message', async (t) => {
  const { app, url } = await buildGateway(t)
  const claude = await fakeAnthropic(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { type: 14, baseUrl: claude.url, key: 'sk-ant-wrong', models: ['claude-sonnet-4-5'], autoBan: false })
  await reload(app)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const missing = await client.responses.create({ model: 'no-such-model', input: 'hi' }).then(() => undefined, (err: unknown) => err)
  t.type(missing, OpenAI.APIError)
  t.match(missing, { status: 404, error: { code: 'model_not_found' } })
  const refused = await client.responses.create({ model: 'claude-sonnet-4-5', input: 'hi' }).then(() => undefined, (err: unknown) => err)
  t.type(refused, OpenAI.APIError)
  t.match(refused, { status: Number, error: { message: String } }, 'OpenAI\'s envelope')
  t.equal(claude.requests.length, 1)
})

t.test('Gemini embedContent and batchEmbedContents: passed through to a Gemini channel, converted for an OpenAI channel', async (t) => {
  const { app, url } = await buildGateway(t)
  const gemini = await fakeGemini(t)
  const openai = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values([
    { key: 'ModelRatio', value: JSON.stringify({ 'text-embedding-004': 0.05, 'text-embedding-3-small': 0.01 }) }
  ]).execute()
  await seedChannel(app.db, { type: 24, baseUrl: gemini.url, key: gemini.key, models: ['text-embedding-004'], modelMapping: { 'text-embedding-004': 'gemini-embedding-001' } })
  await seedChannel(app.db, { baseUrl: openai.url, models: ['text-embedding-3-small'] })
  await reload(app)
  const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url } })

  // Google's SDK embeds through :batchEmbedContents.
  const batch = await ai.models.embedContent({ model: 'text-embedding-004', contents: ['hello world', 'second text'], config: { outputDimensionality: 3, taskType: 'RETRIEVAL_DOCUMENT' } })
  t.same(batch.embeddings?.map((e) => e.values), [[0, 0.5, 0.25], [1, 0.5, 0.25]])
  const passed = gemini.requests[0]!
  t.equal(passed.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents', 'the mapped model in the URL')
  t.equal(passed.headers['x-goog-api-key'], gemini.key)
  t.match(passed.body, {
    requests: [
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 3, taskType: 'RETRIEVAL_DOCUMENT' },
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'second text' }] } }
    ]
  }, 'each request names the mapped model, the rest passes through')

  const single = await fetch(`${url}/v1beta/models/text-embedding-004:embedContent?key=${key}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: { parts: [{ text: 'one text' }] } })
  })
  t.equal(single.status, 200)
  t.same(await single.json(), { embedding: { values: [0.1, 0.2, 0.3] } })
  t.equal(gemini.requests[1]?.path, '/v1beta/models/gemini-embedding-001:embedContent')

  const converted = await ai.models.embedContent({ model: 'text-embedding-3-small', contents: 'hello world', config: { outputDimensionality: 3 } })
  t.same(converted.embeddings, [{ values: [0.1, 0.2, 0.3] }])
  t.match(JSON.parse(openai.requests[0]!.body.toString()), { model: 'text-embedding-3-small', input: ['hello world'], dimensions: 3 }, 'an OpenAI embeddings request')
  t.equal(openai.requests[0]?.path, '/v1/embeddings')
  const viaHeader = await fetch(`${url}/v1beta/models/text-embedding-3-small:embedContent`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key }, body: JSON.stringify({ content: { parts: [{ text: 'first' }, { text: 'second' }] }, outputDimensionality: 3 })
  })
  t.same(await viaHeader.json(), { embedding: { values: [0.1, 0.2, 0.3] } })
  t.match(JSON.parse(openai.requests[1]!.body.toString()), { input: ['first\nsecond'], dimensions: 3 })

  const events = await usageEvents(app)
  t.equal(events.length, 4)
  // Google reports no tokens for embeddings: the gateway counts the inputs.
  const counted = events.filter((e) => e.model_name === 'text-embedding-004').sort((a, b) => a.prompt_tokens - b.prompt_tokens)
  t.match(counted, [
    { upstream_model: 'gemini-embedding-001', prompt_tokens: countTokens('one text'), completion_tokens: 0, usage_source: 'counted', outcome: 'success' },
    { upstream_model: 'gemini-embedding-001', prompt_tokens: countTokens('hello world') + countTokens('second text'), completion_tokens: 0, usage_source: 'counted', outcome: 'success' }
  ])
  t.ok(counted.every((e) => e.quota > 0), 'counted tokens are billed')
  const upstream = events.filter((e) => e.model_name === 'text-embedding-3-small')
  t.equal(upstream.length, 2)
  for (const e of upstream) t.match(e, { prompt_tokens: 5, completion_tokens: 0, usage_source: 'upstream', outcome: 'success' })
})
