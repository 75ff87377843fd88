// A fast OpenAI chat-completions upstream, run in its own process (forked by run.ts; it reports
// its port over IPC and exits when the bench goes away).
//
// Non-stream: a fixed JSON answer with usage. Stream: `mock_chunks` content chunks (default 20),
// a usage chunk and [DONE]; with `mock_chunk_delay_ms` in the body, that pause between two
// chunks (the first one goes at once). Both fields are ours: relays pass unknown fields through.
// A model named `*-paced` streams 5 ms apart too, for bodies a conversion rebuilds.
//
// It also speaks Anthropic's Messages API (`POST /v1/messages`) with the same answers: the same
// text in as many text deltas, the usage in message_start and message_delta.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'

const PROMPT_TOKENS = 9
const CREATED = 1_700_000_000

function answer (model: string, completionTokens: number): string {
  return JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: CREATED,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! '.repeat(completionTokens).trim() }, finish_reason: 'stop' }],
    usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: completionTokens, total_tokens: PROMPT_TOKENS + completionTokens }
  })
}

const chunk = (model: string, delta: Record<string, unknown>, finish: string | null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

/** The SSE events of one streamed answer, serialised once per model and length. */
const streams = new Map<string, string[]>()
function streamEvents (model: string, chunks: number): string[] {
  const key = `${model}\u0000${chunks}`
  let events = streams.get(key)
  if (events === undefined) {
    events = []
    for (let i = 0; i < chunks; i++) {
      events.push(chunk(model, i === 0 ? { role: 'assistant', content: 'Hello! ' } : { content: 'Hello! ' }, i === chunks - 1 ? 'stop' : null))
    }
    events.push(`data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model, choices: [], usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: chunks, total_tokens: PROMPT_TOKENS + chunks } })}\n\n`)
    events.push('data: [DONE]\n\n')
    streams.set(key, events)
  }
  return events
}

/** Anthropic's Messages API events of one streamed answer, serialised once per model and length. */
const anthropicStreams = new Map<string, string[]>()
function anthropicEvents (model: string, chunks: number): string[] {
  const key = `${model}\u0000${chunks}`
  let events = anthropicStreams.get(key)
  if (events === undefined) {
    const event = (data: Record<string, unknown>) => `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`
    const delta = event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello! ' } })
    // The first delta goes with the message and block starts, as Anthropic sends them.
    events = [
      event({ type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: PROMPT_TOKENS, output_tokens: 1 } } }) +
      event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) + delta
    ]
    for (let i = 1; i < chunks; i++) events.push(delta)
    events.push(event({ type: 'content_block_stop', index: 0 }) +
      event({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: chunks } }) +
      event({ type: 'message_stop' }))
    anthropicStreams.set(key, events)
  }
  return events
}

function anthropicAnswer (model: string, completionTokens: number): string {
  return JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: 'Hello! '.repeat(completionTokens).trim() }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: PROMPT_TOKENS, output_tokens: completionTokens }
  })
}

const answers = new Map<string, Buffer>()

function chat (req: IncomingMessage, res: ServerResponse, text: string): void {
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"invalid json","type":"invalid_request_error"}}')
    return
  }
  const model = typeof body['model'] === 'string' ? body['model'] : 'gpt-4o-mini'
  const chunks = typeof body['mock_chunks'] === 'number' ? Math.max(1, Math.trunc(body['mock_chunks'])) : 20
  const anthropic = req.url?.startsWith('/v1/messages') === true
  if (body['stream'] !== true) {
    const cacheKey = `${anthropic ? 'a' : 'o'}\u0000${model}`
    let buf = answers.get(cacheKey)
    if (buf === undefined) answers.set(cacheKey, buf = Buffer.from(anthropic ? anthropicAnswer(model, 20) : answer(model, 20)))
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': buf.length }).end(buf)
    return
  }
  const delay = typeof body['mock_chunk_delay_ms'] === 'number' ? Math.max(0, body['mock_chunk_delay_ms']) : model.endsWith('-paced') ? 5 : 0
  // OpenAI: the content chunks, then usage and [DONE]; Anthropic: the deltas (the first with the
  // message start), then the block and message ends together. Either way `chunks` paced pieces.
  const events = anthropic ? anthropicEvents(model, chunks) : streamEvents(model, chunks)
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  if (delay === 0) {
    for (const e of events) res.write(e)
    res.end()
    return
  }
  let i = 0
  const next = () => {
    if (res.destroyed) return
    res.write(events[i++])
    // The usage chunk and [DONE] follow the last content chunk at once, as real upstreams do.
    while (i < events.length && i >= chunks) res.write(events[i++])
    if (i >= events.length) res.end()
    else setTimeout(next, delay)
  }
  next()
}

const server = createServer((req, res) => {
  if (req.method !== 'POST' || !/^\/v1\/(chat\/completions|messages)(\?|$)/.test(req.url ?? '')) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found","type":"invalid_request_error"}}')
    return
  }
  const parts: Buffer[] = []
  req.on('data', (b: Buffer) => parts.push(b))
  req.on('end', () => { chat(req, res, Buffer.concat(parts).toString('utf8')) })
})
server.keepAliveTimeout = 65_000
server.headersTimeout = 66_000
server.maxRequestsPerSocket = 0

server.listen(0, '127.0.0.1', () => {
  const addr = server.address()
  process.send?.({ port: typeof addr === 'object' && addr !== null ? addr.port : 0 })
})
process.on('disconnect', () => process.exit(0))
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
