import { createServer, type IncomingHttpHeaders } from 'node:http'
import { type AddressInfo, connect as netConnect } from 'node:net'
import { QuotaStore } from '@modelgate/quota'
import type { FastifyInstance } from 'fastify'
import OpenAI from 'openai'
import { OpenAIRealtimeWS } from 'openai/realtime/ws'
import t, { type Test } from 'tap'
import WebSocket, { WebSocketServer } from 'ws'
import { buildGateway, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

const MODEL = 'gpt-4o-realtime-preview'
const CHANNEL_KEY = 'sk-upstream-secret'

interface UpstreamConnection {
  url: string
  headers: IncomingHttpHeaders
  events: Array<Record<string, unknown>>
  binary: Buffer[]
  socket: WebSocket
  closed?: { code: number, reason: string }
}

interface FakeRealtime {
  url: string
  connections: UpstreamConnection[]
  refused: number
}

/** The usage of the n-th response of a connection: text and audio tokens both ways, cached tokens from the second on. */
function usageOf (n: number): Record<string, unknown> {
  const audioIn = 100 * n
  const textIn = 20 * n
  const cachedText = n === 1 ? 0 : 28
  const cachedAudio = n === 1 ? 0 : 100
  const audioOut = 50 * n
  return {
    total_tokens: textIn + audioIn + 10 + audioOut,
    input_tokens: textIn + audioIn,
    output_tokens: 10 + audioOut,
    input_token_details: {
      text_tokens: textIn,
      audio_tokens: audioIn,
      cached_tokens: cachedText + cachedAudio,
      cached_tokens_details: { text_tokens: cachedText, audio_tokens: cachedAudio }
    },
    output_token_details: { text_tokens: 10, audio_tokens: audioOut }
  }
}

/**
 * A realtime websocket server speaking OpenAI's protocol (`/v1/realtime?model=`, Bearer key) or
 * Azure's (`/openai/realtime?api-version=&deployment=`, `api-key`): a wrong key is refused at the
 * handshake with the provider's 401 body; session.created on connect; response.create streams
 * response.created, transcript, text and audio deltas and a response.done with usage; a
 * response.create with metadata `{hold: "yes"}` waits for response.cancel and then reports a
 * cancelled response's usage; binary frames are echoed.
 */
async function fakeRealtime (t: Test, kind: 'openai' | 'azure'): Promise<FakeRealtime> {
  const fake: FakeRealtime = { url: '', connections: [], refused: 0 }
  const wss = new WebSocketServer({ noServer: true })
  const server = createServer((_req, res) => { res.writeHead(404).end() })
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://upstream')
    const authorized = kind === 'openai'
      ? url.pathname === '/v1/realtime' && url.searchParams.get('model') !== null && req.headers.authorization === `Bearer ${CHANNEL_KEY}`
      : url.pathname === '/openai/realtime' && url.searchParams.get('deployment') !== null && url.searchParams.get('api-version') !== null &&
        req.headers['api-key'] === CHANNEL_KEY && req.headers.authorization === undefined
    if (!authorized) {
      fake.refused++
      const body = JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } })
      socket.end(`HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn: UpstreamConnection = { url: req.url ?? '', headers: req.headers, events: [], binary: [], socket: ws }
      fake.connections.push(conn)
      const send = (event: Record<string, unknown>) => { ws.send(JSON.stringify({ event_id: `event_${Math.random().toString(36).slice(2)}`, ...event })) }
      let responses = 0
      let held: { id: string, n: number } | undefined
      const finish = (id: string, n: number, status: string) => {
        send({ type: 'response.done', response: { id, object: 'realtime.response', status, output: [], usage: usageOf(n) } })
      }
      ws.on('close', (code, reason) => { conn.closed = { code, reason: reason.toString() } })
      ws.on('message', (data, binary) => {
        if (binary) {
          conn.binary.push(data as Buffer)
          ws.send(data, { binary: true })
          return
        }
        const event = JSON.parse(String(data)) as Record<string, unknown>
        conn.events.push(event)
        if (event['type'] === 'session.update') send({ type: 'session.updated', session: { id: 'sess_1', ...(event['session'] as object) } })
        if (event['type'] === 'response.cancel' && held !== undefined) {
          finish(held.id, held.n, 'cancelled')
          held = undefined
        }
        if (event['type'] !== 'response.create') return
        const n = ++responses
        const id = `resp_${n}`
        send({ type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress', output: [], usage: null } })
        const at = { response_id: id, item_id: `item_${n}`, output_index: 0, content_index: 0 }
        send({ type: 'response.output_audio_transcript.delta', ...at, delta: 'Hello ' })
        if ((event['response'] as { metadata?: { hold?: string } } | undefined)?.metadata?.hold === 'yes') {
          held = { id, n }
          return
        }
        send({ type: 'response.output_audio_transcript.delta', ...at, delta: `there ${n}` })
        send({ type: 'response.output_text.delta', ...at, delta: 'text' })
        send({ type: 'response.output_audio.delta', ...at, delta: Buffer.from([1, 2, 3, n]).toString('base64') })
        finish(id, n, 'completed')
      })
      send({ type: 'session.created', session: { id: 'sess_1', object: 'realtime.session', model: url.searchParams.get('model') ?? url.searchParams.get('deployment') } })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    for (const c of wss.clients) c.terminate()
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return fake
}

async function until (what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/**
 * The official Node client (OpenAIRealtimeWS) against the gateway. It always builds a wss:// URL;
 * the test gateway speaks plain HTTP, so the socket under it is a plain TCP connection.
 */
function sdkClient (url: string, key: string, model = MODEL): OpenAIRealtimeWS {
  const { port } = new URL(url)
  const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1` })
  return new OpenAIRealtimeWS({ model, options: { createConnection: () => netConnect(Number(port), '127.0.0.1') } }, client)
}

/** A plain `ws` client; resolves when open, or with the HTTP refusal of the handshake. */
async function rawClient (url: string, opts: { key?: string, protocols?: string[], headers?: Record<string, string>, model?: string } = {}): Promise<
  { ws: WebSocket, events: Array<Record<string, unknown>>, binary: Buffer[], closed: Promise<{ code: number, reason: string }> } | { status: number, body: { error?: { message?: string, type?: string, code?: string | null } } }
> {
  const headers = { ...(opts.key === undefined ? {} : { authorization: `Bearer ${opts.key}` }), ...opts.headers }
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/realtime?model=${encodeURIComponent(opts.model ?? MODEL)}`, opts.protocols ?? [], { headers })
  const events: Array<Record<string, unknown>> = []
  const binary: Buffer[] = []
  ws.on('message', (data, isBinary) => {
    if (isBinary) binary.push(data as Buffer)
    else events.push(JSON.parse(String(data)) as Record<string, unknown>)
  })
  const closed = new Promise<{ code: number, reason: string }>((resolve) => { ws.on('close', (code, reason) => { resolve({ code, reason: reason.toString() }) }) })
  return await new Promise((resolve, reject) => {
    ws.once('open', () => { resolve({ ws, events, binary, closed }) })
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as { error?: { message?: string } } }) })
    })
    ws.once('error', reject)
  })
}

async function setup (t: Test, opts: { kind?: 'openai' | 'azure', quota?: number, modelLimits?: string, channelKey?: string, modelMapping?: Record<string, string> } = {}): Promise<{
  app: FastifyInstance, url: string, upstream: FakeRealtime, key: string, userId: number, channelId: number
}> {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeRealtime(t, opts.kind ?? 'openai')
  const user = await seedUser(app.db, opts.quota === undefined ? {} : { quota: opts.quota })
  const { key } = await seedToken(app.db, user.id, opts.modelLimits === undefined ? {} : { modelLimits: opts.modelLimits })
  const ch = await seedChannel(app.db, {
    baseUrl: upstream.url, models: [MODEL], type: opts.kind === 'azure' ? 3 : 1, key: opts.channelKey ?? CHANNEL_KEY,
    ...(opts.modelMapping === undefined ? {} : { modelMapping: opts.modelMapping })
  })
  await reload(app)
  return { app, url, upstream, key, userId: user.id, channelId: ch.id }
}

t.test('the official client talks to OpenAI through the gateway; each response.done is one usage event with its text and audio tokens', async (t) => {
  const { app, url, upstream, key } = await setup(t)
  const rt = sdkClient(url, key)
  const seen: Array<Record<string, unknown>> = []
  rt.on('event', (e) => { seen.push(e as unknown as Record<string, unknown>) })
  const errors: unknown[] = []
  rt.on('error', (err) => { errors.push(err) })
  await until('session.created', () => seen.some((e) => e['type'] === 'session.created'))

  rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'Be brief.' } })
  await until('session.updated', () => seen.some((e) => e['type'] === 'session.updated'))
  rt.send({ type: 'response.create' })
  await until('the first response.done', () => seen.filter((e) => e['type'] === 'response.done').length === 1)
  rt.send({ type: 'response.create', response: { instructions: 'again' } })
  await until('the second response.done', () => seen.filter((e) => e['type'] === 'response.done').length === 2)

  t.same(errors, [])
  const conn = upstream.connections[0]!
  t.equal(upstream.connections.length, 1, 'one upstream session')
  t.equal(conn.url, `/v1/realtime?model=${MODEL}`)
  t.equal(conn.headers.authorization, `Bearer ${CHANNEL_KEY}`, 'the channel key goes upstream, never the client\'s')
  t.equal(conn.headers['openai-beta'], undefined, 'a GA client: no beta header upstream')
  t.same(conn.events.map((e) => e['type']), ['session.update', 'response.create', 'response.create'], 'client events arrive upstream in order')
  t.same(conn.events[0], { type: 'session.update', session: { type: 'realtime', instructions: 'Be brief.' } }, 'unchanged')
  t.same(seen.map((e) => e['type']), [
    'session.created', 'session.updated',
    'response.created', 'response.output_audio_transcript.delta', 'response.output_audio_transcript.delta', 'response.output_text.delta', 'response.output_audio.delta', 'response.done',
    'response.created', 'response.output_audio_transcript.delta', 'response.output_audio_transcript.delta', 'response.output_text.delta', 'response.output_audio.delta', 'response.done'
  ], 'server events reach the client in order')
  t.match(seen[7], { type: 'response.done', response: { id: 'resp_1', usage: usageOf(1) } })

  rt.close()
  await until('the upstream session closed', () => conn.closed !== undefined)
  t.equal(conn.closed?.code, 1000, 'the client\'s close closes the upstream')

  const events = (await usageEvents(app)).sort((a, b) => a.request_id.localeCompare(b.request_id))
  t.equal(events.length, 2, 'one usage event per response')
  const [first, second] = events
  t.match(first, {
    request_id: /\.1$/, model_name: MODEL, upstream_model: MODEL, is_stream: true, outcome: 'success', usage_source: 'upstream',
    prompt_tokens: 120, completion_tokens: 60, cached_tokens: 0, audio_prompt_tokens: 100, audio_completion_tokens: 50, reserved: 500,
    // ratio 2.5, completion 4, audio 8, audio completion 2: (20 + 100*8 + 10*4 + 50*8*2) * 2.5
    quota: 4150
  })
  t.match(second, {
    request_id: /\.2$/, outcome: 'success', prompt_tokens: 240, completion_tokens: 110, cached_tokens: 128, reserved: 500,
    // cached audio is billed as cached: 100 fresh audio tokens of 200
    audio_prompt_tokens: 100, audio_completion_tokens: 100,
    // (12 text + 128 cached at CacheRatio 0.5 + 100*8 + 10*4 + 100*8*2) * 2.5
    quota: 6290
  })
  t.equal(first!.request_id.split('.')[0], second!.request_id.split('.')[0], 'both events name the session')
  t.not(first!.request_id, second!.request_id)
  // Each event settles a reservation of its own id (the billing worker corrects it by reserved - quota).
  const open = await new QuotaStore(app.redis).openReservations()
  t.same(open.map((r) => r.requestId).sort(), events.map((e) => e.request_id), 'one open reservation per event, none left over')
  t.ok(open.every((r) => r.amount === 500))
})

t.test('refusals before the upgrade are HTTP errors in OpenAI\'s shape', async (t) => {
  const { app, url, upstream, key } = await setup(t, { modelLimits: 'gpt-4o-mini' })

  const wrongKey = await rawClient(url, { key: 'sk-nosuchkey00000000000000000000000000' })
  t.match(wrongKey, { status: 401, body: { error: { message: 'Invalid API key', type: 'invalid_request_error' } } })
  const noKey = await rawClient(url)
  t.match(noKey, { status: 401 })
  const notAllowed = await rawClient(url, { key })
  t.match(notAllowed, { status: 403, body: { error: { code: 'model_not_allowed' } } }, 'a model the token may not use')

  // The official client surfaces the refusal as an error.
  const rt = sdkClient(url, 'sk-nosuchkey00000000000000000000000000')
  const err = await new Promise<Error>((resolve) => { rt.on('error', resolve) })
  t.match(err.message, /401/)
  t.equal(upstream.connections.length + upstream.refused, 0, 'nothing reached the upstream')

  const poor = await setup(t, { quota: 0 })
  const refused = await rawClient(poor.url, { key: poor.key })
  t.match(refused, { status: 403, body: { error: { type: 'insufficient_quota', message: 'Insufficient user quota' } } }, 'a user without quota')
  t.equal(poor.upstream.connections.length, 0)

  const plain = await fetch(`${url}/v1/realtime?model=${MODEL}`, { headers: { authorization: `Bearer ${key}` } })
  t.equal(plain.status, 426, 'a plain GET is told to upgrade')
  t.match(await plain.json(), { error: { code: 'websocket_required' } })
  t.same(await usageEvents(app), [])
})

t.test('a browser-style client: key and beta flag as subprotocols; frames both ways unchanged, binary included; quota checked before each response', async (t) => {
  const { app, url, upstream, key, userId } = await setup(t)
  const c = await rawClient(url, { protocols: ['realtime', `openai-insecure-api-key.${key}`, 'openai-beta.realtime-v1'] })
  if (!('ws' in c)) throw new Error(`refused: ${JSON.stringify(c)}`)
  t.equal(c.ws.protocol, 'realtime', 'the gateway answers with the realtime subprotocol, never the key')
  await until('session.created', () => c.events.length > 0)
  const conn = upstream.connections[0]!
  t.equal(conn.headers['openai-beta'], 'realtime=v1', 'the beta protocol is asked for upstream')
  t.equal(conn.headers['sec-websocket-protocol'], undefined, 'no subprotocol (so no client key) goes upstream')
  t.equal(conn.headers.authorization, `Bearer ${CHANNEL_KEY}`)

  // Large binary frames both ways, in order (the gateway pauses a side when the other lags).
  const frames = Array.from({ length: 24 }, (_, i) => Buffer.alloc(512 * 1024, i))
  for (const f of frames) c.ws.send(f, { binary: true })
  await until('every frame echoed', () => c.binary.length === frames.length, 20_000)
  t.ok(c.binary.every((b, i) => b.equals(frames[i]!)), 'binary frames unchanged and in order')
  t.equal(conn.binary.length, frames.length)

  c.ws.send(JSON.stringify({ type: 'response.create', event_id: 'evt_1' }))
  await until('response.done', () => c.events.some((e) => e['type'] === 'response.done'))

  // The balance is gone: the next response.create is refused with a realtime error event.
  await new QuotaStore(app.redis).setBalance('user', userId, 0)
  c.ws.send(JSON.stringify({ type: 'response.create', event_id: 'evt_2' }))
  c.ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'still here' }] } }))
  await until('the refusal', () => c.events.some((e) => e['type'] === 'error'))
  t.match(c.events.find((e) => e['type'] === 'error'), { type: 'error', error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'Insufficient user quota', event_id: 'evt_2' } })
  await until('the next event upstream', () => conn.events.length === 2)
  t.same(conn.events.map((e) => e['type']), ['response.create', 'conversation.item.create'], 'the refused response.create never went upstream; later events still do')
  t.equal(c.ws.readyState, WebSocket.OPEN, 'the session stays open')

  // The upstream ends the session: the client's socket closes with its code and reason.
  conn.socket.close(4001, 'session expired')
  t.same(await c.closed, { code: 4001, reason: 'session expired' })
  const events = await usageEvents(app)
  t.equal(events.length, 1)
  t.match(events[0], { prompt_tokens: 120, completion_tokens: 60, audio_prompt_tokens: 100, audio_completion_tokens: 50, quota: 4150 })
})

t.test('the client leaving mid-response: the response is cancelled upstream and what it used is billed; an upstream that drops closes the client', async (t) => {
  const { app, url, upstream, key, userId } = await setup(t)
  const c = await rawClient(url, { key })
  if (!('ws' in c)) throw new Error('refused')
  c.ws.send(JSON.stringify({ type: 'response.create', response: { metadata: { hold: 'yes' } } }))
  await until('the first delta', () => c.events.some((e) => e['type'] === 'response.output_audio_transcript.delta'))
  c.ws.close()
  const conn = upstream.connections[0]!
  await until('the upstream session closed', () => conn.closed !== undefined)
  t.match(conn.events.map((e) => e['type']), ['response.create', 'response.cancel'], 'the response in flight was cancelled')
  t.match(conn.events[1], { type: 'response.cancel', response_id: 'resp_1' })
  const events = await usageEvents(app)
  t.match(events, [{ outcome: 'aborted', prompt_tokens: 120, completion_tokens: 60, quota: 4150 }], 'the cancelled response is billed')

  const d = await rawClient(url, { key })
  if (!('ws' in d)) throw new Error('refused')
  await until('the second upstream session', () => upstream.connections.length === 2)
  upstream.connections[1]!.socket.terminate()
  t.match(await d.closed, { code: 1014, reason: 'upstream connection lost' }, 'an upstream that drops: 1014 (bad gateway)')

  // A session without responses gives its reservation back and leaves no usage event.
  const store = new QuotaStore(app.redis)
  await until('the idle session\'s reservation given back', async () => (await store.openReservations()).length === 1)
  t.same((await store.openReservations()).map((r) => r.requestId), [events[0]!.request_id])
  t.equal(await store.balance('user', userId), 10_000_000 - 500, 'only the billed response\'s reservation is still held (until its settlement)')
  t.equal((await usageEvents(app)).length, 1)
})

t.test('an upstream refusing the channel key: the client gets an HTTP error, the channel is set aside, one failed event', async (t) => {
  const { app, url, upstream, key, channelId } = await setup(t, { channelKey: 'sk-revoked' })
  const res = await rawClient(url, { key })
  t.match(res, { status: 502, body: { error: { message: /^The upstream provider failed to answer \(request id: [0-9a-f-]{36}\)$/, type: 'upstream_error' } } })
  t.notMatch(JSON.stringify('body' in res ? res.body : {}), /Incorrect API key|invalid_api_key/, 'the channel\'s own failure is for admins, not the client')
  t.equal(upstream.refused, 1)
  const row = await app.db.selectFrom('channels').select('status').where('id', '=', channelId).executeTakeFirstOrThrow()
  t.equal(row.status, 3, 'auto-disabled, as the HTTP relay does')
  const events = await usageEvents(app)
  t.match(events, [{ outcome: 'failed', quota: 0, channel_id: 0, error: { status: 502 } }])
})

t.test('an Azure channel: /openai/realtime with api-version and deployment, the key as api-key', async (t) => {
  const { app, url, upstream, key } = await setup(t, { kind: 'azure', modelMapping: { [MODEL]: 'rt.deploy' } })
  const rt = sdkClient(url, key)
  const seen: string[] = []
  rt.on('event', (e) => { seen.push(e.type) })
  await until('session.created', () => seen.includes('session.created'))
  rt.send({ type: 'response.create' })
  await until('response.done', () => seen.includes('response.done'))
  const conn = upstream.connections[0]!
  t.equal(conn.url, '/openai/realtime?api-version=2025-04-01-preview&deployment=rtdeploy', 'the default API version raised to one with realtime; the deployment without dots')
  t.equal(conn.headers['api-key'], CHANNEL_KEY)
  t.equal(conn.headers.authorization, undefined)
  rt.close()
  await until('the upstream session closed', () => conn.closed !== undefined)
  t.match(await usageEvents(app), [{ model_name: MODEL, upstream_model: 'rt.deploy', prompt_tokens: 120, completion_tokens: 60, quota: 4150 }])

  // A channel naming a newer API version keeps it.
  await app.db.updateTable('channels').set({ other: '2025-08-28' }).execute()
  await reload(app)
  const again = await rawClient(url, { key })
  if (!('ws' in again)) throw new Error('refused')
  await until('the second upstream session', () => upstream.connections.length === 2)
  t.equal(upstream.connections[1]!.url, '/openai/realtime?api-version=2025-08-28&deployment=rtdeploy')

  // The gateway stopping ends open sessions with "going away", and their upstreams with them.
  await app.close()
  t.match(await again.closed, { code: 1001 })
  await until('the upstream session closed', () => upstream.connections[1]!.closed !== undefined)
})
