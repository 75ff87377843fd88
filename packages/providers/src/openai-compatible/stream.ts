import type { StreamConverter, Usage } from '../core/adaptor.js'
import { at, isRecord, list, parseJson, str } from '../core/json.js'
import { choiceText } from './chat.js'
import { readUsage } from './usage.js'

/** Typed events (responses API, streamed audio and images) that end a stream normally. */
const TERMINAL_EVENTS: ReadonlySet<string> = new Set([
  'response.completed',
  'response.incomplete',
  'transcript.text.done',
  'speech.audio.done',
  'image_generation.completed',
  'image_edit.completed'
])

/** Typed events whose `delta` is completion text. */
const TEXT_DELTA_EVENTS: ReadonlySet<string> = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_summary_text.delta',
  'response.function_call_arguments.delta',
  'transcript.text.delta'
])

const LF = 0x0a
const CR = 0x0d
const EMPTY = Buffer.alloc(0)
const DATA = Buffer.from('data:')
const DATA_SPACE = Buffer.from('data: ')
const EVENT_SPACE = Buffer.from('event: ')
const DONE = Buffer.from('[DONE]')
const TYPE_KEY = Buffer.from('"type"')
const USAGE_KEY = Buffer.from('"usage"')
/** `"usage"` followed by an object (not `"usage":null`, which OpenAI sends in every chunk). */
const USAGE_OBJECT = /"usage"\s*:\s*\{/

const startsWith = (buf: Buffer, at: number, end: number, prefix: Buffer) =>
  end - at >= prefix.length && buf.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0

/** One server-sent event being read: where it starts and what its lines held. */
interface EventState {
  /** Offset of its first line in the buffer. */
  start: number
  /** Data lines, without the field name. */
  data: Buffer[]
  name: string | undefined
  /**
   * Every line is `data: ...` or `event: ...` ending in LF: the bytes as received are exactly
   * what normalising would write, so they are forwarded as they are.
   */
  canonical: boolean
}

const newEvent = (start: number): EventState => ({ start, data: [], name: undefined, canonical: true })

/** An event's data: its data lines joined by LF (the one line itself when there is one). */
const payloadOf = (e: EventState): Buffer =>
  e.data.length === 1 ? e.data[0]! : Buffer.from(e.data.map((d) => d.toString('utf8')).join('\n'))

/** The bytes to send, as one buffer (no copy when there is a single piece). */
const joined = (out: Buffer[]): Buffer => (out.length === 0 ? EMPTY : out.length === 1 ? out[0]! : Buffer.concat(out))

/**
 * Relays an OpenAI server-sent-event stream (chat, completions, responses, streamed audio and
 * images): complete events are forwarded as they arrive, comments, keep-alives and fields other
 * than `event` and `data` dropped, line endings normalised to LF; usage, text and the end marker
 * are read on the way. Keeps only the event being read in memory, plus the events whose text
 * has not been taken yet.
 *
 * Works on bytes: an event already in the normal form (every line `data: ...` or `event: ...`
 * ending in LF, as upstreams send them) goes out as a slice of the bytes received, without
 * decoding or re-encoding. Only events that may carry usage or a type (`"usage":{`, `"type"`,
 * `[DONE]`) are parsed at once; the others are kept as bytes and parsed by takeText(), which the
 * gateway calls only when the upstream reported no usage (or every `untakenBytes()` 64 KB).
 */
export function createOpenAIStream (): StreamConverter {
  /** Bytes from the start of the event being read (or of an unfinished line) to the end of input. */
  let pending: Buffer = EMPTY
  /** Where reading resumes in `pending`: the first byte of the first unfinished line. */
  let resume = 0
  let event = newEvent(0)
  let usage: Usage | undefined
  /** Completion text in arrival order: strings already read, buffers still to parse. */
  let untaken: Array<string | Buffer> = []
  let untakenBytes = 0
  let done = false

  function keepText (text: string | Buffer): void {
    if (text.length === 0) return
    untaken.push(text)
    untakenBytes += text.length
  }

  function textOf (payload: string): string {
    const json = parseJson(payload)
    if (!isRecord(json)) return ''
    let text = ''
    for (const choice of list(json.choices)) text += choiceText(choice, 'delta')
    return text
  }

  function inspect (payload: Buffer): void {
    if (payload.equals(DONE)) {
      done = true
      return
    }
    const usageAt = payload.indexOf(USAGE_KEY)
    const wanted = payload.indexOf(TYPE_KEY) !== -1 || (usageAt !== -1 && USAGE_OBJECT.test(payload.toString('latin1', usageAt)))
    if (!wanted) {
      // A plain chunk: its text is read only if someone asks for it.
      keepText(payload)
      return
    }
    const json = parseJson(payload.toString('utf8'))
    if (!isRecord(json)) return
    const type = str(json.type)
    let seen = readUsage(json.usage) ?? readUsage(at(json, 'response', 'usage'))
    let text = ''
    for (const choice of list(json.choices)) {
      text += choiceText(choice, 'delta')
      // Moonshot puts the usage inside the last choice instead of beside it.
      seen ??= isRecord(choice) ? readUsage(choice.usage) : undefined
    }
    if (seen !== undefined) usage = seen
    if (type !== undefined) {
      if (TEXT_DELTA_EVENTS.has(type)) text += str(json.delta) ?? ''
      if (TERMINAL_EVENTS.has(type)) done = true
    }
    keepText(text)
  }

  /** The normal form of an event that was not received in it. */
  function normalised (e: EventState): Buffer {
    let out = e.name === undefined ? '' : `event: ${e.name}\n`
    for (const line of e.data) out += `data: ${line.toString('utf8')}\n`
    return Buffer.from(out + '\n')
  }

  /**
   * Reads the complete lines of `buf` from `from`; returns the bytes to send (complete events)
   * and where the first unfinished line starts.
   */
  function read (buf: Buffer, from: number, final: boolean): { out: Buffer[], rest: number } {
    const out: Buffer[] = []
    let pos = from
    // Upstreams end lines with LF; only input holding a CR needs the byte-by-byte search.
    const anyCR = buf.indexOf(CR, from) !== -1
    // Start of a run of canonical events that can go out as one slice.
    let runStart = -1
    let runEnd = -1
    const flushRun = () => {
      if (runStart !== -1) out.push(buf.subarray(runStart, runEnd))
      runStart = -1
    }
    for (;;) {
      const eol = lineEnd(buf, pos, anyCR)
      if (eol >= buf.length) break
      let next = eol + 1
      if (buf[eol] === CR) {
        // A CR at the very end may be the first half of a CRLF split across chunks.
        if (next >= buf.length && !final) break
        if (buf[next] === LF) next++
        event.canonical = false
      }
      if (eol === pos) {
        // Blank line: the event is complete.
        if (event.data.length > 0) {
          inspect(payloadOf(event))
          if (event.canonical) {
            if (runStart === -1) runStart = event.start
            runEnd = next
          } else {
            flushRun()
            out.push(normalised(event))
          }
        } else {
          flushRun()
        }
        event = newEvent(next)
      } else if (buf[pos] === 0x3a) {
        // A comment (keep-alive): never forwarded.
        event.canonical = false
      } else if (startsWith(buf, pos, eol, DATA)) {
        if (!startsWith(buf, pos, eol, DATA_SPACE)) event.canonical = false
        event.data.push(buf.subarray(pos + (buf[pos + 5] === 0x20 ? 6 : 5), eol))
      } else {
        const colon = buf.indexOf(0x3a, pos)
        const field = buf.toString('utf8', pos, colon === -1 || colon > eol ? eol : colon)
        if (field === 'event') {
          if (!startsWith(buf, pos, eol, EVENT_SPACE)) event.canonical = false
          let value = colon === -1 || colon > eol ? '' : buf.toString('utf8', colon + 1, eol)
          if (value.startsWith(' ')) value = value.slice(1)
          event.name = value
        } else {
          // id, retry and unknown fields are dropped.
          event.canonical = false
        }
      }
      pos = next
    }
    flushRun()
    return { out, rest: pos }
  }

  function push (chunk: Buffer): Buffer {
    if (chunk.length === 0) return EMPTY
    const buf = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    const { out, rest } = read(buf, resume, false)
    // Keep the event being read (its first line onwards; it starts at or before the first
    // unfinished line) so that an event received in pieces is still sent in one piece.
    pending = event.start >= buf.length ? EMPTY : buf.subarray(event.start)
    resume = rest - event.start
    event.start = 0
    return joined(out)
  }

  return {
    passThrough: true,
    push,
    end: () => {
      // No closing blank line: a complete last event still counts, a cut one is dropped.
      const buf = pending
      pending = EMPTY
      if (buf.length === 0) return EMPTY
      const { out } = read(Buffer.concat([buf, Buffer.from('\n')]), resume, true)
      if (event.data.length > 0) {
        const payload = payloadOf(event)
        if (payload.equals(DONE) || parseJson(payload.toString('utf8')) !== undefined) {
          inspect(payload)
          out.push(normalised(event))
        }
      }
      event = newEvent(0)
      resume = 0
      return joined(out)
    },
    usage: () => usage,
    untakenBytes: () => untakenBytes,
    takeText: () => {
      let text = ''
      for (const part of untaken) text += typeof part === 'string' ? part : textOf(part.toString('utf8'))
      untaken = []
      untakenBytes = 0
      return text
    },
    finished: () => done
  }
}

/**
 * Where the SSE line starting at `pos` ends: the index of its LF or CR, or `buf.length` when the
 * line is not complete yet. Input without any CR (`anyCR` false, the usual case) is searched with
 * indexOf; with a CR, byte by byte, since CR, LF and CRLF all end a line.
 */
export function lineEnd (buf: Buffer, pos: number, anyCR: boolean): number {
  if (!anyCR) {
    const eol = buf.indexOf(LF, pos)
    return eol === -1 ? buf.length : eol
  }
  let eol = pos
  while (eol < buf.length && buf[eol] !== LF && buf[eol] !== CR) eol++
  return eol
}
