import Anthropic from '@anthropic-ai/sdk'
import { ApiError, GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import t, { type Test } from 'tap'
import WebSocket from 'ws'
import { buildGateway, fakeOpenAI, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

/**
 * Issue 27: a model no channel of the caller's group lists at all is the caller's mistake, 404
 * model_not_found in the caller's protocol, which SDKs do not retry; a model whose channels all
 * exist but cannot serve now (disabled, auto-disabled) stays 503 no_available_channel, which they do.
 */

/** A gateway with one enabled, one disabled and one auto-disabled channel in `default`, one channel in `vip` only; counts requests by path. */
async function setup (t: Test) {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  const disabled = await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4.1-mini', 'gpt-4o-realtime-preview'] })
  const autoDisabled = await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4.1'] })
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o'], groups: ['vip'] })
  await app.db.updateTable('channels').set({ status: 2 }).where('id', '=', disabled.id).execute()
  await app.db.updateTable('channels').set({ status: 3 }).where('id', '=', autoDisabled.id).execute()
  await reload(app)
  const hits = new Map<string, number>()
  app.server.on('request', (req: { url?: string }) => {
    const path = (req.url ?? '').split('?')[0] ?? ''
    hits.set(path, (hits.get(path) ?? 0) + 1)
  })
  return { app, url, upstream, key, hits }
}

t.test('the state tells a model no channel lists from one whose channels are all unusable', async (t) => {
  const { app } = await setup(t)
  const state = app.relayState
  t.ok(state.lists('default', 'gpt-4.1-mini') && !state.serves('default', 'gpt-4.1-mini'), 'a disabled channel\'s model is listed, not served')
  t.ok(state.lists('default', 'gpt-4.1') && !state.serves('default', 'gpt-4.1'), 'so is an auto-disabled one\'s')
  t.notOk(state.lists('default', 'gpt-4o'), 'a model of another group is not listed in this one')
  t.notOk(state.lists('default', 'no-such-model'))
  t.throws(() => { state.checkServes('default', 'no-such-model') }, { status: 404, code: 'model_not_found' })
  t.throws(() => { state.checkServes('default', 'gpt-4o') }, { status: 404, code: 'model_not_found' })
  t.throws(() => { state.checkServes('default', 'gpt-4.1-mini') }, { status: 503, code: 'no_available_channel' })
  t.throws(() => { state.checkServes('default', 'gpt-4.1') }, { status: 503, code: 'no_available_channel' })
  t.doesNotThrow(() => { state.checkServes('default', 'gpt-4o-mini') })
})

t.test('OpenAI SDK: an unlisted model is a 404 NotFoundError, asked once; a model with only disabled channels is a 503, retried', async (t) => {
  const { url, upstream, key, hits, app } = await setup(t)
  // The SDK's default retries (2): it retries 5xx, never 404.
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1` })
  const path = '/v1/chat/completions'
  for (const model of ['no-such-model', 'gpt-4o']) {
    const before = hits.get(path) ?? 0
    const err = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e)
    t.type(err, OpenAI.NotFoundError, `${model}: NotFoundError`)
    t.match(err, { status: 404, error: { type: 'invalid_request_error', code: 'model_not_found', message: new RegExp(`model ${model} does not exist`) } })
    t.equal((hits.get(path) ?? 0) - before, 1, `${model}: one request, no retry`)
  }
  const responses = await client.responses.create({ model: 'no-such-model', input: 'hi' }).then(() => undefined, (e: unknown) => e)
  t.type(responses, OpenAI.NotFoundError, 'the Responses API too')
  t.equal(hits.get('/v1/responses'), 1)

  const before = hits.get(path) ?? 0
  const unavailable = await client.chat.completions.create({ model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e)
  t.type(unavailable, OpenAI.InternalServerError)
  t.match(unavailable, { status: 503, error: { type: 'service_unavailable', code: 'no_available_channel' } })
  t.equal((hits.get(path) ?? 0) - before, 3, 'a 503 is retried by the SDK (1 + 2)')

  t.equal(upstream.requests.length, 0, 'nothing reached an upstream')
  t.same(await usageEvents(app), [], 'refused before admission: no usage event')
})

t.test('Anthropic SDK: NotFoundError with not_found_error for an unlisted model; overloaded_error (503) for a disabled one', async (t) => {
  const { url, upstream, key, hits } = await setup(t)
  const client = new Anthropic({ apiKey: key, baseURL: url })
  const err = await client.messages.create({ model: 'claude-nothing-4', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e)
  t.type(err, Anthropic.NotFoundError)
  t.match(err, { status: 404, error: { type: 'error', error: { type: 'not_found_error', message: /model claude-nothing-4 does not exist/ } } })
  t.equal(hits.get('/v1/messages'), 1, 'asked once, not retried')
  const res = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4.1-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
  })
  t.equal(res.status, 503)
  t.match(await res.json(), { type: 'error', error: { type: 'overloaded_error', message: /No available channel/ } })
  t.equal(upstream.requests.length, 0)
})

t.test('Gemini: Google\'s NOT_FOUND for an unlisted model (the SDK\'s ApiError 404); UNAVAILABLE for a disabled one', async (t) => {
  const { url, upstream, key } = await setup(t)
  const err = await new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url } }).models
    .generateContent({ model: 'gemini-nothing', contents: 'hi' }).then(() => undefined, (e: unknown) => e)
  t.type(err, ApiError)
  t.equal((err as ApiError).status, 404)
  for (const [model, action, status, name] of [
    ['gemini-nothing', 'generateContent', 404, 'NOT_FOUND'],
    ['gemini-nothing', 'streamGenerateContent?alt=sse', 404, 'NOT_FOUND'],
    ['gemini-nothing', 'embedContent', 404, 'NOT_FOUND'],
    ['gpt-4.1-mini', 'generateContent', 503, 'UNAVAILABLE']
  ] as const) {
    const res = await fetch(`${url}/v1beta/models/${model}:${action}`, {
      method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] })
    })
    t.equal(res.status, status, `${model}:${action}`)
    t.match(await res.json(), { error: { code: status, status: name } })
  }
  t.equal(upstream.requests.length, 0)
})

t.test('realtime and task submissions follow the same rule', async (t) => {
  const { app, url, key } = await setup(t)
  const handshake = async (model: string) => await new Promise<{ status: number, body: unknown }>((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/realtime?model=${model}`, { headers: { authorization: `Bearer ${key}` } })
    ws.once('open', () => { ws.close(); reject(new Error('upgraded')) })
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }) })
    })
    ws.once('error', reject)
  })
  t.match(await handshake('gpt-realtime-nothing'), { status: 404, body: { error: { code: 'model_not_found' } } }, 'realtime: an unlisted model')
  t.match(await handshake('gpt-4o-realtime-preview'), { status: 503, body: { error: { code: 'no_available_channel' } } }, 'realtime: a disabled channel\'s model')

  // Suno: no channel of the group lists suno_music; then a disabled channel does.
  const submit = async () => {
    const res = await fetch(`${url}/suno/submit/music`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'p' }) })
    return { status: res.status, body: await res.json() as unknown }
  }
  t.match(await submit(), { status: 404, body: { code: 'model_not_found' } }, 'a task model no channel lists, in Suno\'s shape')
  const suno = await seedChannel(app.db, { type: 36, baseUrl: 'http://127.0.0.1:1', models: ['suno_music'] })
  await app.db.updateTable('channels').set({ status: 2 }).where('id', '=', suno.id).execute()
  await reload(app)
  t.match(await submit(), { status: 503, body: { code: 'no_available_channel' } }, 'and one whose only channel is disabled')
})
