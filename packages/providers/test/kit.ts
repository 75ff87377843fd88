// What the conformance suites share: a real HTTP server on 127.0.0.1 standing in for a provider,
// awkward writes, a relay loop that reads answers as the gateway does, and the native fixtures' shape.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import type { ChannelConfig, Endpoint, FailureAction, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest, Usage } from '../src/index.js'

export const MODEL = 'gpt-4.1-mini'

export interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: Buffer
}

export type Handler = (res: ServerResponse, seen: Seen) => void | Promise<void>

export interface Upstream {
  origin: string
  seen: Seen[]
  /** Sets how the server answers the next requests. */
  answer: (handler: Handler) => void
  last: () => Seen
}

export async function startUpstream (t: Test): Promise<Upstream> {
  const seen: Seen[] = []
  let handler: Handler = (res) => { res.writeHead(500).end() }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }
      seen.push(entry)
      Promise.resolve(handler(res, entry)).catch((err: unknown) => res.destroy(err as Error))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    answer: (next) => { handler = next },
    last: () => {
      const entry = seen.at(-1)
      if (entry === undefined) throw new Error('the upstream saw no request')
      return entry
    }
  }
}

export function json (res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body))
}

export function write (res: ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => res.write(chunk, (err) => { if (err) reject(err); else resolve() }))
}

export const tick = () => new Promise((resolve) => setTimeout(resolve, 1))

/**
 * Writes `text` as an SSE answer: the bytes inside `slow` ranges one at a time with a pause after
 * each (so the client reads them one by one: mid-line, mid-character), the rest in larger pieces.
 */
export async function writeAwkwardly (res: ServerResponse, text: string | Buffer, slow: Array<[number, number]>, contentType = 'text/event-stream'): Promise<void> {
  res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache' })
  const bytes = Buffer.from(text)
  let at = 0
  for (const [from, to] of slow) {
    if (from > at) await write(res, bytes.subarray(at, from))
    for (let i = from; i < to; i++) {
      await write(res, bytes.subarray(i, i + 1))
      await tick()
    }
    at = Math.max(at, to)
  }
  if (at < bytes.length) await write(res, bytes.subarray(at))
  res.end()
}

/**
 * Byte ranges around the first occurrence of `marker` (by bytes; the middle when it does not
 * occur, as in a binary framing) and over the last `tail` bytes.
 */
export function slowRanges (text: string | Buffer, marker: string, tail: number): Array<[number, number]> {
  const bytes = Buffer.from(text)
  const found = bytes.indexOf(marker)
  const start = found < 0 ? bytes.length >> 1 : found
  return [[Math.max(0, start - 6), start + Buffer.byteLength(marker) + 6], [bytes.length - tail, bytes.length]]
}

export async function send (up: UpstreamRequest): Promise<Response> {
  return await fetch(up.url, { method: up.method, headers: up.headers, body: up.body })
}

export async function bytesOf (res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer())
}

export function parsed (body: Buffer): Record<string, unknown> {
  return JSON.parse(body.toString('utf8')) as Record<string, unknown>
}

export interface Relayed {
  chunks: Uint8Array[]
  out: string
  tail: string
  text: string
  /** finished() after each chunk. */
  finishedAfter: boolean[]
  error: unknown
}

/** Reads the upstream answer as the gateway does: chunk by chunk through the converter. */
export async function relay (res: Response, converter: StreamConverter): Promise<Relayed> {
  const relayed: Relayed = { chunks: [], out: '', tail: '', text: '', finishedAfter: [], error: undefined }
  if (res.body === null) throw new Error('no body')
  const reader = res.body.getReader()
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      relayed.chunks.push(next.value)
      relayed.out += converter.push(Buffer.from(next.value)).toString()
      relayed.text += converter.takeText()
      relayed.finishedAfter.push(converter.finished())
    }
  } catch (err) {
    relayed.error = err
  }
  relayed.tail = converter.end().toString()
  relayed.text += converter.takeText()
  return relayed
}

export function splitsACharacter (chunks: Uint8Array[]): boolean {
  const strict = new TextDecoder('utf-8', { fatal: true })
  return chunks.some((chunk) => {
    try {
      strict.decode(chunk)
      return false
    } catch {
      return true
    }
  })
}

export function relayRequest (endpoint: Endpoint, body: Record<string, unknown>, stream = false): RelayRequest {
  return { endpoint, format: 'openai', model: MODEL, stream, body }
}

/** What an OpenAI chat client received from a converted stream. */
export interface ChunkSummary {
  content: string
  reasoning: string
  toolCalls: Array<{ id: string, name: string, arguments: string }>
  finish: unknown
  usage: unknown
  /** The first delta carried the role. */
  roleFirst: boolean
  done: boolean
}

/** Reads OpenAI chat.completion.chunk events as a client would. */
export function readChunks (out: string): ChunkSummary {
  const summary: ChunkSummary = { content: '', reasoning: '', toolCalls: [], finish: null, usage: undefined, roleFirst: false, done: false }
  const events = out.split('\n\n').filter((event) => event !== '')
  events.forEach((event, i) => {
    if (!event.startsWith('data: ')) throw new Error(`not a data event: ${event}`)
    const data = event.slice('data: '.length)
    if (data === '[DONE]') {
      summary.done = i === events.length - 1
      return
    }
    const chunk = JSON.parse(data) as { object: string, usage?: unknown, choices: Array<{ delta: Record<string, unknown>, finish_reason: unknown }> }
    if (chunk.object !== 'chat.completion.chunk') throw new Error(`not a chunk: ${data}`)
    if (chunk.usage !== undefined) summary.usage = chunk.usage
    for (const choice of chunk.choices) {
      const delta = choice.delta
      if (i === 0) summary.roleFirst = delta.role === 'assistant'
      if (typeof delta.content === 'string') summary.content += delta.content
      if (typeof delta.reasoning_content === 'string') summary.reasoning += delta.reasoning_content
      for (const call of (delta.tool_calls ?? []) as Array<{ index: number, id?: string, function?: { name?: string, arguments?: string } }>) {
        const known = summary.toolCalls[call.index] ?? (summary.toolCalls[call.index] = { id: '', name: '', arguments: '' })
        known.id += call.id ?? ''
        known.name += call.function?.name ?? ''
        known.arguments += call.function?.arguments ?? ''
      }
      if (choice.finish_reason !== null) summary.finish = choice.finish_reason
    }
  })
  return summary
}

/** The chat side of a native protocol: OpenAI chat clients converted to the provider's own form. */
export interface NativeChat {
  /** Path of a chat request as the server sees it (with its query). */
  path: (model: string, stream: boolean) => string
  /** The non-streamed answer to `{messages: [{role: 'user', content: 'hi'}]}`: 'Hello there', NATIVE_USAGE. */
  answer: unknown
  /** A stream answering 'Héllo, wörld 你好 🎉' with NATIVE_USAGE (text framing, or bytes for a binary one). */
  stream: () => string | Buffer
  /** Content type of a streamed answer (default `text/event-stream`). */
  streamContentType?: string
  /** The stream is binary framing (AWS event stream): the split-character check does not apply. */
  binaryStream?: boolean
  /**
   * The non-streamed and streamed answers calling get_weather({"city":"Paris"}) with id call_1;
   * absent for providers without tools.
   */
  tools?: { answer: unknown, stream: () => string | Buffer }
  /** Checks the provider's form of a chat request with a system prompt, a user turn and (with tools) the get_weather tool. */
  checkBody: (t: Test, body: Record<string, unknown>, seen: Seen) => void
  /**
   * The usage the provider reports, when it cannot report cached tokens (default NATIVE_USAGE);
   * null when it reports none (the gateway counts the tokens).
   */
  usage?: Usage | null
  /**
   * The provider cannot stream: a streamed request is answered with one whole answer (`stream()`
   * is that answer), converted into events once it has all arrived (nothing of a cut one goes out).
   */
  wholeAnswer?: boolean
}

/** What a fixture's own tests get. */
export interface NativeContext {
  up: Upstream
  channel: ChannelConfig
  adaptor: ProviderAdaptor
  /** Answers with `body` (JSON, or a stream text) when authorized, else as the provider refuses. */
  serve: (body: unknown, status?: number) => void
  /** Builds, overrides and authorizes `req` as the relay does, and sends it. */
  send: (req: RelayRequest, channel?: ChannelConfig) => Promise<Response>
}

/**
 * A provider's own protocol, as its local test server speaks it. One file per channel type in
 * test/native/ (named `<type>-<name>.ts`, exporting `fixture`), run by native.test.ts.
 */
export interface NativeProtocol {
  /** The channel under test, from the server's origin (key format, `other`, base URL). */
  channel: (origin: string) => ChannelConfig
  /** A credential of the right form the provider refuses. */
  wrongKey: string
  /**
   * Whether the request carries the channel's credential (header, signature or token) as the
   * provider checks it (asynchronously where the check is, as jose's JWT verification).
   */
  authorized: (seen: Seen, channel: ChannelConfig) => boolean | Promise<boolean>
  /** The provider's answer to a request without a valid credential. */
  refuse: (res: ServerResponse) => void
  /**
   * Requests the server answers before the credential check, such as an access token exchange;
   * returns true when it answered.
   */
  auxiliary?: (res: ServerResponse, seen: Seen, channel: ChannelConfig) => boolean
  /** Absent for providers that serve no chat (embeddings or rerank only). */
  chat?: NativeChat
  /** The OpenAI endpoints the adaptor serves besides chat (checked with `extra`). */
  endpoints?: Endpoint[]
  /** The model list: its path and an answer naming model-a and model-b; absent when the provider has none. */
  models?: { path: string, answer: unknown }
  /** The URLs of a channel without a base URL, for `model` (absent: the default base URL + the paths above). */
  defaultUrls?: (channel: ChannelConfig, model: string) => { chat?: string, models?: string }
  errors: Array<{ what: string, status: number, body: string, action: FailureAction, code?: string }>
  /** Tests of the type's own (other endpoints, signatures, token caching). */
  extra?: (t: Test, ctx: NativeContext) => Promise<void>
}

export const NATIVE_USAGE: Usage = { promptTokens: 12, completionTokens: 7, cachedTokens: 4 }

export const WEATHER_TOOL = { type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }

