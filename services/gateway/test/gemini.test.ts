import { ApiError, GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import t from 'tap'
import { buildGateway, fakeGemini, fakeOpenAI, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

t.test('a Gemini client is served by an OpenAI channel, streamed and not, billed on the upstream\'s usage', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  // Google's SDK sends the key as x-goog-api-key and streams with alt=sse.
  const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url } })

  const answer = await ai.models.generateContent({
    model: 'gpt-4o-mini',
    contents: 'hi',
    config: { systemInstruction: 'Be brief.', maxOutputTokens: 100 }
  })
  t.equal(answer.text, 'Hello there!')
  t.match(answer.usageMetadata, { promptTokenCount: 12, candidatesTokenCount: 4 })
  t.equal(answer.candidates?.[0]?.finishReason, 'STOP')
  const sent = JSON.parse(upstream.requests[0]!.body.toString()) as Record<string, unknown>
  t.match(sent, { model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user' }] }, 'the upstream got a chat request')

  let text = ''
  let usage: { promptTokenCount?: number, candidatesTokenCount?: number } | undefined
  for await (const chunk of await ai.models.generateContentStream({ model: 'gpt-4o-mini', contents: 'count' })) {
    text += chunk.text ?? ''
    if (chunk.usageMetadata !== undefined) usage = chunk.usageMetadata
  }
  t.equal(text, 'word0 word1 word2 ')
  t.match(usage, { promptTokenCount: 11, candidatesTokenCount: 6 })

  // Without alt=sse the stream is one JSON array; the key may come as ?key=.
  const raw = await fetch(`${url}/v1beta/models/gpt-4o-mini:streamGenerateContent?key=${key}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'count' }] }] })
  })
  t.equal(raw.status, 200)
  t.match(raw.headers.get('content-type'), /application\/json/)
  const values = await raw.json() as Array<{ candidates?: Array<{ content?: { parts?: Array<{ text?: string }> } }> }>
  t.ok(Array.isArray(values) && values.length > 1, 'a JSON array of responses')
  t.equal(values.map((v) => v.candidates?.[0]?.content?.parts?.map((p) => p.text ?? '').join('') ?? '').join(''), 'word0 word1 word2 ')

  const events = await usageEvents(app)
  t.equal(events.length, 3)
  t.ok(events.every((e) => e.model_name === 'gpt-4o-mini' && e.usage_source === 'upstream' && e.outcome === 'success' && e.quota > 0))
  t.match(events.filter((e) => !e.is_stream), [{ prompt_tokens: 12, completion_tokens: 4 }])

  const counted = await ai.models.countTokens({ model: 'gpt-4o-mini', contents: 'How many tokens is this?' })
  t.ok((counted.totalTokens ?? 0) > 5 && (counted.totalTokens ?? 0) < 40, `countTokens: ${counted.totalTokens}`)

  const listed = await fetch(`${url}/v1beta/models`, { headers: { 'x-goog-api-key': key } })
  t.match(await listed.json(), { models: [{ name: 'models/gpt-4o-mini', supportedGenerationMethods: ['generateContent', 'countTokens'] }] })
})

t.test('refusals reach Gemini clients in Google\'s error shape', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)
  const err = await new GoogleGenAI({ apiKey: 'sk-nosuchkey000000000000000000000000', httpOptions: { baseUrl: url } }).models
    .generateContent({ model: 'gpt-4o-mini', contents: 'hi' }).then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof ApiError)
  t.equal((err as ApiError).status, 401)
  const res = await fetch(`${url}/v1beta/models/no-such-model:generateContent`, {
    method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] })
  })
  t.equal(res.status, 404)
  t.match(await res.json(), { error: { code: 404, status: 'NOT_FOUND', message: /model no-such-model does not exist/ } })
  const unknown = await fetch(`${url}/v1beta/models/gpt-4o-mini:embedEverything`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: '{}' })
  t.equal(unknown.status, 404)
  t.match(await unknown.json(), { error: { code: 404, status: 'NOT_FOUND' } })
  t.equal(upstream.requests.length, 0)
})

t.test('a Gemini channel: Gemini clients pass through, OpenAI clients are converted, thoughts and cache billed', async (t) => {
  const { app, url } = await buildGateway(t)
  const gemini = await fakeGemini(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await app.db.insertInto('options').values([
    { key: 'ModelRatio', value: JSON.stringify({ 'gemini-2.5-flash': 0.15 }) },
    { key: 'CompletionRatio', value: JSON.stringify({ 'gemini-2.5-flash': 8 }) },
    { key: 'CacheRatio', value: JSON.stringify({ 'gemini-2.5-flash': 0.25 }) }
  ]).execute()
  await seedChannel(app.db, { type: 24, baseUrl: gemini.url, key: gemini.key, models: ['gemini-2.5-flash'] })
  await reload(app)

  const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url } })
  const answer = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi', config: { temperature: 0.5 } })
  t.equal(answer.text, 'Hello from Gemini')
  const passed = gemini.requests[0]!
  t.equal(passed.path, '/v1beta/models/gemini-2.5-flash:generateContent')
  t.equal(passed.headers['x-goog-api-key'], gemini.key, 'the channel key, not the relay key')
  t.match(passed.body, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { temperature: 0.5 } }, 'the body passed through')

  let text = ''
  for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' })) text += chunk.text ?? ''
  t.equal(text, 'Hello from Gemini')
  t.match(gemini.requests[1], { path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent', query: /alt=sse/ })

  const openai = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
  const chat = await openai.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] })
  t.equal(chat.choices[0]?.message.content, 'Hello from Gemini')
  t.match(chat.usage, { prompt_tokens: 40, completion_tokens: 13 }, 'thinking tokens are completion tokens')
  t.match(gemini.requests[2]?.body, { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user' }] }, 'the OpenAI request became a generateContent request')

  const events = await usageEvents(app)
  t.equal(events.length, 3)
  // 30 new prompt tokens, 10 cached at 0.25, 13 out (5 + 8 thinking) at 8; model ratio 0.15.
  const expected = Math.round((30 + 10 * 0.25 + 13 * 8) * 0.15)
  for (const e of events) t.match(e, { prompt_tokens: 40, cached_tokens: 10, completion_tokens: 13, quota: expected, usage_source: 'upstream' })
})
