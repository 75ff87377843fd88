// The official OpenAI client through the gateway to a channel of every OpenAI-wire type, each a
// local server that checks the type's own path and credential and streams in the type's own way
// (usage in a last chunk, beside the finish like Mistral, or inside the last choice like Moonshot).
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import OpenAI from 'openai'
import t, { type Test } from 'tap'
import { buildGateway, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

interface Wire {
  type: number
  /** The path (with query) the type sends a chat request to for model gpt-4o-mini. */
  path: string
  /** Whether the request carries the channel's key as the type does. */
  authorized: (req: IncomingMessage) => boolean
  /** Where a stream reports its usage. */
  streamUsage: 'usage-chunk' | 'with-finish' | 'in-last-choice'
  other?: string
}

const KEY = 'sk-channel-key'
const bearer = (req: IncomingMessage) => req.headers.authorization === `Bearer ${KEY}`

const WIRES: Wire[] = [
  { type: 1, path: '/v1/chat/completions', authorized: bearer, streamUsage: 'usage-chunk' },
  { type: 3, path: '/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21', authorized: (req) => req.headers['api-key'] === KEY && req.headers.authorization === undefined, streamUsage: 'usage-chunk', other: '2024-10-21' },
  { type: 4, path: '/v1/chat/completions', authorized: bearer, streamUsage: 'usage-chunk' },
  { type: 8, path: '/v1/chat/completions', authorized: bearer, streamUsage: 'usage-chunk' },
  { type: 19, path: '/v1/chat/completions', authorized: bearer, streamUsage: 'usage-chunk' },
  { type: 25, path: '/v1/chat/completions', authorized: bearer, streamUsage: 'in-last-choice' },
  { type: 31, path: '/v1/chat/completions', authorized: bearer, streamUsage: 'usage-chunk' },
  { type: 40, path: '/v1/chat/completions', authorized: bearer, streamUsage: 'usage-chunk' },
  { type: 42, path: '/v1/chat/completions', authorized: bearer, streamUsage: 'with-finish' },
  { type: 43, path: '/v1/chat/completions', authorized: bearer, streamUsage: 'usage-chunk' }
]

const USAGE = { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 }

async function upstream (t: Test, wire: Wire): Promise<{ url: string, seen: string[] }> {
  const seen: string[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = []
    req.on('data', (b: Buffer) => parts.push(b))
    req.on('end', () => {
      seen.push(req.url ?? '')
      if (!wire.authorized(req)) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }))
        return
      }
      if (req.url !== wire.path) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.url ?? ''}`, type: 'invalid_request_error' } }))
        return
      }
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { stream?: boolean }
      const base = { id: 'chatcmpl-1', created: 1, model: 'gpt-4o-mini' }
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the upstream' }, finish_reason: 'stop' }], usage: USAGE }))
        return
      }
      const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(chunk([{ index: 0, delta: { role: 'assistant', content: 'Héllo ' }, finish_reason: null }]))
      res.write(chunk([{ index: 0, delta: { content: 'streamed' }, finish_reason: null }]))
      if (wire.streamUsage === 'in-last-choice') res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop', usage: USAGE }]))
      else if (wire.streamUsage === 'with-finish') res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }], { usage: USAGE }))
      else res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]) + chunk([], { usage: USAGE }))
      res.end('data: [DONE]\n\n')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

t.test('the OpenAI client reaches a channel of every OpenAI-wire type, streamed and not, billed on the upstream\'s usage', async (t) => {
  const { app, url } = await buildGateway(t)
  const user = await seedUser(app.db)
  for (const wire of WIRES) {
    const up = await upstream(t, wire)
    const { key } = await seedToken(app.db, user.id)
    const channel = await seedChannel(app.db, { type: wire.type, baseUrl: up.url, key: KEY, models: ['gpt-4o-mini'] })
    if (wire.other !== undefined) await app.db.updateTable('channels').set({ other: wire.other }).where('id', '=', channel.id).execute()
    await reload(app)
    const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })

    const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    t.equal(answer.choices[0]?.message.content, 'Hello from the upstream', `type ${wire.type}: answered`)
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
    t.equal(text, 'Héllo streamed', `type ${wire.type}: streamed`)
    t.same(up.seen, [wire.path, wire.path], `type ${wire.type}: the type's own path and credential`)

    const events = (await usageEvents(app)).filter((e) => e.channel_id === channel.id).sort((a, b) => Number(a.is_stream) - Number(b.is_stream))
    t.match(events, [
      { channel_id: channel.id, is_stream: false, prompt_tokens: 13, completion_tokens: 5, usage_source: 'upstream', outcome: 'success' },
      { channel_id: channel.id, is_stream: true, prompt_tokens: 13, completion_tokens: 5, usage_source: 'upstream', outcome: 'success' }
    ], `type ${wire.type}: billed on the upstream's usage`)
    // Only one channel serves the model at a time: this one steps aside for the next type's.
    await app.db.updateTable('channels').set({ status: 2 }).where('id', '=', channel.id).execute()
  }
})
