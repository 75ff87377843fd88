import { createRequire } from 'node:module'
import type * as CodecModule from '@smithy/eventstream-codec'
import type { EventStreamCodec, Message, MessageHeaders } from '@smithy/eventstream-codec'
import type * as Utf8Module from '@smithy/util-utf8'
import type { RelayRequest, StreamConverter, Usage } from '../core/adaptor.js'
import { claudeChatEvents, claudeUsage, createClaudePassThroughStream, readClaudeTokens, type ClaudeTokens } from '../claude/index.js'
import { isRecord, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { streamConverter } from '../core/stream-converter.js'

/** Content type of Bedrock's streamed answers (AWS event stream binary framing). */
export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream'

/** The event stream's largest message (16 MiB): a longer announced length means a corrupt stream. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024
/** Prelude (total and header lengths, prelude CRC) and message CRC: the smallest message. */
const MIN_MESSAGE_BYTES = 16
const EMPTY = Buffer.alloc(0)

const require = createRequire(import.meta.url)
let loaded: EventStreamCodec | undefined

/**
 * The event stream decoder, loaded (synchronously: a converter is made without awaiting) on the
 * first Bedrock stream, so a gateway without AWS channels does not carry it.
 */
function eventStreamCodec (): EventStreamCodec {
  if (loaded === undefined) {
    const { EventStreamCodec: Codec } = require('@smithy/eventstream-codec') as typeof CodecModule
    const { fromUtf8, toUtf8 } = require('@smithy/util-utf8') as typeof Utf8Module
    loaded = new Codec(toUtf8, fromUtf8)
  }
  return loaded
}

/** What Bedrock's stream carries, decoded. */
interface BedrockEventHandlers {
  /** One Anthropic stream event (a `chunk` event's `bytes`): its parsed JSON and its text. */
  event: (json: unknown, text: string) => void
  /**
   * An exception message (`:message-type: exception`, such as throttlingException or
   * modelStreamErrorException, or an `error` message): the stream ends there, nothing after it is read.
   */
  exception: (code: string, message: string) => void
}

/** Reads Bedrock's event stream chunk by chunk. */
interface BedrockEventReader {
  push: (chunk: Buffer) => void
  /** The upstream ended: a message cut short is dropped. */
  end: () => void
}

function headerText (headers: MessageHeaders, name: string): string | undefined {
  const header = headers[name]
  return header !== undefined && typeof header.value === 'string' ? header.value : undefined
}

/**
 * Decodes the AWS event stream framing (each message: total length, headers length, prelude
 * CRC, headers, payload, message CRC) as bytes arrive, with @smithy/eventstream-codec checking each
 * message. It holds only the message being received, whatever the chunking; a corrupt message
 * (bad CRC, impossible length) stops the reading, so the stream never counts as finished.
 */
export function bedrockEventReader (handlers: BedrockEventHandlers): BedrockEventReader {
  let parts: Buffer[] = []
  let held = 0
  /** Length of the message being received, once its prelude is in (0 before). */
  let need = 0
  let stopped = false

  function message (decoded: Message): void {
    const kind = headerText(decoded.headers, ':message-type')
    const payload = Buffer.from(decoded.body.buffer, decoded.body.byteOffset, decoded.body.byteLength).toString('utf8')
    if (kind === 'event') {
      if (headerText(decoded.headers, ':event-type') !== 'chunk') return
      const chunk = parseJson(payload)
      const bytes = isRecord(chunk) ? str(chunk.bytes) : undefined
      if (bytes === undefined) return
      const text = Buffer.from(bytes, 'base64').toString('utf8')
      handlers.event(parseJson(text), text)
      return
    }
    if (kind === 'exception' || kind === 'error') {
      stopped = true
      const json = parseJson(payload)
      const code = headerText(decoded.headers, ':exception-type') ?? headerText(decoded.headers, ':error-code') ?? 'streamError'
      const text = (isRecord(json) ? str(json.message) ?? str(json.Message) : undefined) ?? headerText(decoded.headers, ':error-message') ?? 'the upstream stream failed'
      handlers.exception(code, text)
    }
  }

  function read (): void {
    while (!stopped) {
      if (need === 0) {
        if (held < 4) return
        if (parts[0]!.length < 4) parts = [Buffer.concat(parts, held)]
        need = parts[0]!.readUInt32BE(0)
        if (need < MIN_MESSAGE_BYTES || need > MAX_MESSAGE_BYTES) {
          stopped = true
          return
        }
      }
      if (held < need) return
      const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts, held)
      const rest = buf.subarray(need)
      const frame = buf.subarray(0, need)
      parts = rest.length === 0 ? [] : [rest]
      held = rest.length
      need = 0
      let decoded: Message
      try {
        decoded = eventStreamCodec().decode(frame)
      } catch {
        stopped = true
        return
      }
      message(decoded)
    }
  }

  return {
    push: (chunk) => {
      if (stopped || chunk.length === 0) return
      parts.push(chunk)
      held += chunk.length
      read()
    },
    end: () => {
      parts = []
      held = 0
      need = 0
      stopped = true
    }
  }
}

/**
 * The counts of `amazon-bedrock-invocationMetrics` (on the last event) as an Anthropic usage
 * object: Bedrock's own tally, used when the Anthropic events carried none.
 */
function metricsUsage (event: JsonRecord): Record<string, number> | undefined {
  const metrics = event['amazon-bedrock-invocationMetrics']
  if (!isRecord(metrics)) return undefined
  const usage: Record<string, number> = {}
  const fields: Array<[string, string]> = [
    ['inputTokenCount', 'input_tokens'],
    ['outputTokenCount', 'output_tokens'],
    ['cacheReadInputTokenCount', 'cache_read_input_tokens'],
    ['cacheWriteInputTokenCount', 'cache_creation_input_tokens']
  ]
  for (const [from, to] of fields) {
    const count = num(metrics[from])
    if (count !== undefined) usage[to] = count
  }
  return usage.input_tokens === undefined && usage.output_tokens === undefined ? undefined : usage
}

/**
 * Bedrock's stream for an OpenAI chat client: each decoded Anthropic event goes through Claude's
 * chat stream converter (claudeChatEvents), so the client gets the same chunks as from a Claude
 * channel, usage included (from the Anthropic events, else from Bedrock's invocation metrics). An
 * exception message reaches the client as an error chunk (when content went out already) and the
 * stream stays unfinished: the gateway ends it as interrupted, or tries another channel when
 * nothing was sent yet.
 */
export function createBedrockChatStream (req: RelayRequest): StreamConverter {
  const events = claudeChatEvents(req)
  const reader = bedrockEventReader({
    event: (json) => {
      if (isRecord(json) && json.type === 'message_stop' && events.usage() === undefined) {
        const usage = metricsUsage(json)
        if (usage !== undefined) events.event({ type: 'message_delta', delta: {}, usage })
      }
      events.event(json)
    },
    exception: (code, message) => { events.event({ type: 'error', error: { type: code, message } }) }
  })
  return streamConverter(reader, events)
}

/** Anthropic's error type for a Bedrock stream exception. */
function anthropicErrorType (code: string): string {
  const lower = code.toLowerCase()
  if (lower.startsWith('throttling')) return 'rate_limit_error'
  if (lower.startsWith('serviceunavailable')) return 'overloaded_error'
  if (lower.startsWith('validation')) return 'invalid_request_error'
  return 'api_error'
}

/**
 * Bedrock's stream for an Anthropic client: the decoded events are sent as Anthropic's own
 * server-sent events (`event: <type>` / `data: <event>`), read on the way by Claude's
 * pass-through converter (usage, text, `message_stop`). An exception after some events becomes
 * an Anthropic `error` event and the stream stays unfinished.
 */
export function createBedrockPassThroughStream (): StreamConverter {
  const inner = createClaudePassThroughStream()
  let out: Buffer[] = []
  let sent = false
  const fallback: ClaudeTokens = {}
  const emit = (sse: string) => {
    const bytes = inner.push(Buffer.from(sse))
    if (bytes.length > 0) out.push(bytes)
  }
  const reader = bedrockEventReader({
    event: (json, text) => {
      if (!isRecord(json)) return
      const type = str(json.type)
      if (type === undefined) return
      if (type === 'message_stop') readClaudeTokens(metricsUsage(json), fallback)
      // One data line per event: the upstream's text unless it holds line breaks.
      emit(`event: ${type}\ndata: ${/[\r\n]/.test(text) ? JSON.stringify(json) : text}\n\n`)
    },
    exception: (code, message) => {
      if (sent || out.length > 0) emit(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: anthropicErrorType(code), message } })}\n\n`)
    }
  })
  const flush = (): Buffer => {
    if (out.length === 0) return EMPTY
    const bytes = out.length === 1 ? out[0]! : Buffer.concat(out)
    out = []
    sent = true
    return bytes
  }
  return streamConverter(reader, {
    flush,
    usage: (): Usage | undefined => inner.usage() ?? (inner.finished() ? claudeUsage(fallback) : undefined),
    finished: inner.finished,
    text: { take: inner.takeText, bytes: inner.untakenBytes }
  })
}
