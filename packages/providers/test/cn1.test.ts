// Baidu's access token exchange, PaLM's whole-answer stream and Zhipu's key, beyond the native
// fixtures (test/native/11-palm2.ts, 15-baidu.ts, 16-chatglm.ts, 26-glm-4v.ts).
import type { ServerResponse } from 'node:http'
import t from 'tap'
import { adaptorFor, clearTokenCache, CredentialError, upstreamRequest, type ChannelConfig, type ProviderAdaptor } from '../src/index.js'
import { json, readChunks, relayRequest, startUpstream } from './kit.js'

function adaptor (type: number): ProviderAdaptor {
  const found = adaptorFor(type)
  if (found === undefined) throw new Error(`no adaptor for type ${type}`)
  return found
}

const baidu = adaptor(15)
const palm = adaptor(11)
const glm = adaptor(16)

t.test('Baidu: how token exchange failures are classified, and that a failed exchange is not cached', async (t) => {
  const up = await startUpstream(t)
  t.teardown(clearTokenCache)
  const channel: ChannelConfig = { id: 1, type: 15, key: 'ak|sk', baseUrl: up.origin, other: '', organization: null, setting: {} }
  const req = relayRequest('chat', { messages: [{ role: 'user', content: 'hi' }] })
  const cases: Array<[string, (res: ServerResponse) => void, string, RegExp]> = [
    ['invalid_client with HTTP 200', (res) => json(res, 200, { error: 'invalid_client', error_description: 'unknown client id' }), 'disable', /invalid_client: unknown client id/],
    ['invalid_client with HTTP 401', (res) => json(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' }), 'disable', /Client authentication failed/],
    ['HTTP 500', (res) => res.writeHead(500).end('<html>oops</html>'), 'retry', /HTTP 500/],
    ['no token in a 2xx answer', (res) => json(res, 200, { scope: 'public' }), 'retry', /HTTP 200/]
  ]
  for (const [what, answer, action, message] of cases) {
    up.answer(answer)
    const err = await upstreamRequest(baidu, channel, req).catch((e: unknown) => e)
    t.type(err, CredentialError, what)
    t.match(err, { action, message }, what)
    t.notMatch(String((err as Error).message), /\bsk\b/, `${what}: the secret is not in the message`)
  }
  t.equal(up.seen.length, cases.length, 'every request tried again: nothing cached')
  const seen = new URL(up.last().url, 'http://x')
  t.equal(seen.pathname, '/oauth/2.0/token')
  t.same(Object.fromEntries(seen.searchParams), { grant_type: 'client_credentials', client_id: 'ak', client_secret: 'sk' })
  t.equal(up.last().method, 'POST')

  up.answer((res) => json(res, 200, { access_token: 'tok-a', expires_in: 2592000 }))
  const [a, b] = await Promise.all([upstreamRequest(baidu, channel, req), upstreamRequest(baidu, channel, req)])
  t.match(a.url, /\?access_token=tok-a$/)
  t.equal(a.url, b.url)
  t.equal(up.seen.length, cases.length + 1, 'concurrent requests share one exchange')
  const other = await upstreamRequest(baidu, { ...channel, key: 'ak2|sk2' }, req)
  t.equal(up.seen.length, cases.length + 2, 'another key has its own token')
  t.match(other.url, /access_token=tok-a/)
})

t.test('Baidu: an error event before any content sends nothing; need_clear_history finishes by content_filter', async (t) => {
  const channel: ChannelConfig = { id: 1, type: 15, key: 'ak|sk', baseUrl: 'http://127.0.0.1:9', other: '', organization: null, setting: {} }
  const req = relayRequest('chat', { messages: [] }, true)
  const conv = baidu.createStream(channel, req)
  const early = conv.push(Buffer.from(`data: ${JSON.stringify({ error_code: 336100, error_msg: 'busy' })}\n\n`))
  t.equal(early.length, 0, 'an error before any content sends nothing (the relay may try another channel)')
  t.notOk(conv.finished())
  const out = conv.push(Buffer.from(`data: ${JSON.stringify({ id: 'as-1', result: 'x', is_end: false })}\n\ndata: ${JSON.stringify({ id: 'as-1', result: 'y', is_end: true, need_clear_history: true, usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })}\n\n`)).toString()
  t.match(readChunks(out), { content: 'xy', finish: 'content_filter', done: true, usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })
  t.same(conv.usage(), { promptTokens: 3, completionTokens: 2 })
  t.equal(conv.takeText(), 'xy')
})

t.test('PaLM: the whole answer is converted once complete, white space after it or not', async (t) => {
  const req = relayRequest('chat', { messages: [] }, true)
  const channel: ChannelConfig = { id: 1, type: 11, key: 'k', baseUrl: '', other: '', organization: null, setting: {} }
  const body = Buffer.from(`${JSON.stringify({ candidates: [{ author: '1', content: 'a' }, { author: '1', content: 'b' }] })}\n`)
  const conv = palm.createStream(channel, req)
  let out = ''
  for (let i = 0; i < body.length; i += 5) out += conv.push(body.subarray(i, i + 5)).toString()
  t.ok(conv.finished())
  out += conv.end().toString()
  const events = out.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)) as { choices: Array<{ index: number, delta: { content?: string }, finish_reason: string | null }> })
  t.same(events.map((e) => [e.choices[0]?.index, e.choices[0]?.delta.content ?? null, e.choices[0]?.finish_reason]), [[0, '', null], [0, 'a', null], [0, null, 'stop'], [1, '', null], [1, 'b', null], [1, null, 'stop']])
  t.match(out, /data: \[DONE\]\n\n$/)
  t.equal(conv.takeText(), 'ab')

  const empty = palm.createStream(channel, req)
  t.equal(empty.end().length, 0)
  t.notOk(empty.finished(), 'no answer: not finished (the relay may try another channel)')
  const notPalm = palm.createStream(channel, req)
  notPalm.push(Buffer.from('{"unexpected":true}'))
  t.notOk(notPalm.finished())
  t.notOk(palm.isStream?.('text/html'))
})

t.test('Zhipu: one JWT header, kept across overrides; an overridden Authorization wins', async (t) => {
  t.teardown(clearTokenCache)
  const channel: ChannelConfig = { id: 1, type: 16, key: 'id.secret', baseUrl: 'http://127.0.0.1:9', other: '', organization: null, setting: {} }
  const req = relayRequest('chat', { messages: [] })
  const up = await upstreamRequest(glm, channel, req)
  const auth = Object.entries(up.headers).filter(([name]) => name.toLowerCase() === 'authorization')
  t.equal(auth.length, 1)
  t.match(auth[0]?.[1], /^Bearer ey/)
  t.notMatch(auth[0]?.[1], /secret/)
  const overridden = await upstreamRequest(glm, { ...channel, headerOverride: { 'X-Extra': '1' } }, req)
  t.equal(overridden.headers['X-Extra'], '1')
  t.equal(overridden.headers.Authorization, up.headers.Authorization, 'the cached token')
  const raw = await upstreamRequest(glm, { ...channel, headerOverride: { authorization: 'Bearer {api_key}' } }, req)
  t.same(Object.entries(raw.headers).filter(([name]) => name.toLowerCase() === 'authorization'), [['authorization', 'Bearer id.secret']])
})
