import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { testDns } from '@modelgate/testing'
import t, { type Test } from 'tap'
import { buildGateway, fakeOpenAI, reload, seedChannel, seedToken, seedUser } from './fixtures.js'

// SSRF in the relay (issue 18, SEC-23 and SEC-25). Only servers on 127.0.0.1 are ever contacted.

const CHANNEL_KEY = 'sk-channel-key-must-stay-home'

interface Recorder {
  url: string
  port: number
  hits: Array<{ method: string, path: string, headers: IncomingMessage['headers'], body: string }>
}

/** An HTTP server on 127.0.0.1 recording every request; `answer` decides the reply. */
async function recorder (t: Test, answer: (req: IncomingMessage, body: string, res: ServerResponse) => void = (_req, _body, res) => { res.writeHead(404).end() }): Promise<Recorder> {
  const rec: Recorder = { url: '', port: 0, hits: [] }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      rec.hits.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body })
      answer(req, body, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  rec.port = (server.address() as AddressInfo).port
  rec.url = `http://127.0.0.1:${rec.port}`
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve() }) }))
  return rec
}

async function chat (url: string, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ status: number, text: string }> {
  const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  return { status: res.status, text: await res.text() }
}

const hello = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }

t.test('SEC-23 DNS rebinding and redirects: the relay judges the address it connects to, follows no redirect, and never sends the channel key to another host', async (t) => {
  const names = await testDns()
  t.teardown(names.close)
  const upstream = await fakeOpenAI(t)
  const port = new URL(upstream.url).port
  // Public when the URL was checked on save, loopback when the relay connects.
  names.answers.set('rebind.example.test', (asked) => asked === 0 ? ['93.184.216.34'] : ['127.0.0.1'])

  await t.test('rebinding to loopback under OUTBOUND_PUBLIC_ONLY is refused at connect time', async (t) => {
    const { app, url } = await buildGateway(t, { OUTBOUND_PUBLIC_ONLY: 'true', OUTBOUND_DNS_SERVERS: names.server })
    const base = `http://rebind.example.test:${port}`
    await app.outbound.checkUrl(base)
    t.pass('the name resolved to a public address when it was checked (as on save)')
    const user = await seedUser(app.db)
    const { key } = await seedToken(app.db, user.id)
    await seedChannel(app.db, { baseUrl: base, models: ['gpt-4o-mini'], key: CHANNEL_KEY, autoBan: false })
    await reload(app)
    const res = await chat(url, key, hello)
    t.equal(res.status, 502, 'the relay fails')
    t.notMatch(res.text, /127\.0\.0\.1|rebind/, 'without naming the internal target to the client')
    t.ok((names.asked.get('rebind.example.test') ?? 0) >= 2, 'the relay resolved the name again when it connected')
    t.equal(upstream.requests.length, 0, 'nothing reached the loopback server')

    // IP literals in every spelling are judged the same way (a socket skips the lookup for them).
    for (const literal of ['127.0.0.1', '[::ffff:127.0.0.1]', '0x7f000001', '2130706433', '[::ffff:7f00:1]']) {
      await app.db.deleteFrom('abilities').execute()
      await app.db.deleteFrom('channels').execute()
      await seedChannel(app.db, { baseUrl: `http://${literal}:${port}`, models: ['gpt-4o-mini'], key: CHANNEL_KEY, autoBan: false })
      await reload(app)
      t.equal((await chat(url, key, hello)).status, 502, `http://${literal} is refused at connect time`)
    }
    t.equal(upstream.requests.length, 0, 'nothing reached the loopback server')
  })

  await t.test('the same channel works in default mode (loopback upstreams are allowed)', async (t) => {
    const { app, url } = await buildGateway(t, { OUTBOUND_DNS_SERVERS: names.server })
    const user = await seedUser(app.db)
    const { key } = await seedToken(app.db, user.id)
    await seedChannel(app.db, { baseUrl: `http://rebind.example.test:${port}`, models: ['gpt-4o-mini'], key: CHANNEL_KEY })
    await reload(app)
    t.equal((await chat(url, key, hello)).status, 200)
    t.equal(upstream.requests.at(-1)?.headers.authorization, `Bearer ${CHANNEL_KEY}`)
  })

  await t.test('a 302 to another host is not followed: the key stays with the channel host', async (t) => {
    const elsewhere = await recorder(t, (_req, _body, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end('{}') })
    const redirecting = await recorder(t, (_req, _body, res) => { res.writeHead(302, { location: `${elsewhere.url}/v1/chat/completions` }).end() })
    const { app, url } = await buildGateway(t)
    const user = await seedUser(app.db)
    const { key } = await seedToken(app.db, user.id)
    await seedChannel(app.db, { baseUrl: redirecting.url, models: ['gpt-4o-mini'], key: CHANNEL_KEY, autoBan: false })
    await reload(app)
    const res = await chat(url, key, hello)
    t.not(res.status, 200, 'the relay fails rather than follow')
    t.ok(redirecting.hits.length >= 1, 'the channel host was called')
    t.equal(redirecting.hits[0]!.headers.authorization, `Bearer ${CHANNEL_KEY}`, 'with the channel key')
    t.equal(elsewhere.hits.length, 0, 'the host it redirected to saw nothing')
    const stream = await chat(url, key, { ...hello, stream: true })
    t.not(stream.status, 200, 'a stream request does not follow either')
    t.equal(elsewhere.hits.length, 0, 'the host it redirected to still saw nothing')
  })
})

/** A fake Anthropic Messages API: records requests, answers one text block. */
function claudeAnswer (_req: IncomingMessage, body: string, res: ServerResponse): void {
  const model = (JSON.parse(body) as { model?: string }).model ?? 'claude'
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
    id: 'msg_1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 1 }
  }))
}

/** A fake Gemini generateContent API. */
function geminiAnswer (_req: IncomingMessage, _body: string, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
    candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1, totalTokenCount: 6 }
  }))
}

t.test('SEC-25 client-supplied routing fields never change the upstream host or credentials; image links are never fetched by the gateway', async (t) => {
  const elsewhere = await recorder(t, (_req, _body, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end('{}') })
  const upstream = await fakeOpenAI(t)
  const { app, url } = await buildGateway(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'], key: CHANNEL_KEY })
  const claude = await recorder(t, claudeAnswer)
  await seedChannel(app.db, { type: 14, baseUrl: claude.url, models: ['claude-sonnet-4-5'], key: 'sk-ant-channel-key' })
  const gemini = await recorder(t, geminiAnswer)
  await seedChannel(app.db, { type: 24, baseUrl: gemini.url, models: ['gemini-2.5-flash'], key: 'gemini-channel-key' })
  await reload(app)

  const routing = {
    api_base: elsewhere.url,
    base_url: elsewhere.url,
    api_key: 'sk-attacker-key',
    custom_host: elsewhere.url,
    extra_headers: { authorization: 'Bearer sk-attacker-key', host: `127.0.0.1:${elsewhere.port}` },
    custom_llm_provider: 'openai'
  }
  const bodies = [
    { ...hello, ...routing },
    { ...hello, extra_body: routing },
    { ...hello, metadata: { nested: { deeper: routing } } },
    { ...hello, messages: [{ role: 'user', content: 'hi', ...routing }] }
  ]
  const headers = {
    'x-portkey-custom-host': elsewhere.url,
    'x-portkey-provider': 'openai',
    'x-api-base': elsewhere.url,
    'x-base-url': elsewhere.url,
    'x-forwarded-host': `127.0.0.1:${elsewhere.port}`,
    'x-api-key': 'sk-attacker-key',
    'api-key': 'sk-attacker-key'
  }
  for (const [i, body] of bodies.entries()) {
    const res = await chat(url, key, body, headers)
    t.equal(res.status, 200, `body ${i} is served`)
    const seen = upstream.requests.at(-1)!
    t.equal(seen.headers.authorization, `Bearer ${CHANNEL_KEY}`, `body ${i}: the channel's key was sent`)
    t.equal(seen.headers.host, new URL(upstream.url).host, `body ${i}: to the channel's host`)
    t.notOk(Object.values(seen.headers).flat().some((v) => String(v).includes('sk-attacker-key')), `body ${i}: no client-supplied credential in the headers`)
    t.notOk(Object.keys(seen.headers).some((h) => h.startsWith('x-portkey') || h === 'x-api-base' || h === 'x-base-url'), `body ${i}: override headers are not forwarded`)
  }
  t.equal(upstream.requests.length, bodies.length, 'every request went to the channel')
  t.equal(elsewhere.hits.length, 0, 'the host named by the client saw nothing')

  // Image links go to providers as links (Claude's url source, Gemini's fileData): the gateway
  // itself never fetches them, so a metadata or internal address in one reaches nothing.
  const trap = await recorder(t)
  const images = [`${trap.url}/latest/meta-data/iam/security-credentials/role.png`, 'http://169.254.169.254/latest/meta-data/iam/security-credentials/']
  for (const [model, server] of [['claude-sonnet-4-5', claude], ['gemini-2.5-flash', gemini]] as const) {
    for (const image of images) {
      const res = await chat(url, key, { model, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: image } }] }] })
      t.equal(res.status, 200, `${model}: served`)
      t.ok(server.hits.at(-1)!.body.includes(JSON.stringify(image).slice(1, -1)), `${model}: the link went to the provider as a link`)
    }
  }
  t.equal(trap.hits.length, 0, 'the gateway fetched no image itself')
  t.equal(elsewhere.hits.length, 0, 'and nothing else was contacted')
})
