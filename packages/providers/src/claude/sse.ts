import { parseJson } from '../core/json.js'

const LF = 0x0a
const CR = 0x0d
const COLON = 0x3a
const SPACE = 0x20
const EMPTY = Buffer.alloc(0)
const DATA = Buffer.from('data')
const EVENT = Buffer.from('event')
const NEWLINE = Buffer.from([LF])

/** One server-sent event: its `event:` name (if any) and its data lines joined by LF. */
export interface SseEvent {
  name: string | undefined
  data: Buffer
}

/** Reads server-sent events from a byte stream, chunk by chunk. */
interface SseReader {
  /** Reads `chunk`; returns the bytes of the events it completed, exactly as received. */
  push: (chunk: Buffer) => Buffer
  /**
   * The stream ended: a last event complete but for its blank line counts when its data is JSON
   * (its bytes are returned); a cut one is dropped.
   */
  end: () => Buffer
}

/** Whether the line `buf[at, end)` is the field `name` (a byte loop: Buffer.compare costs more for a name this short). */
function fieldIs (buf: Buffer, at: number, end: number, name: Buffer): boolean {
  const n = name.length
  if (end - at < n || (end - at > n && buf[at + n] !== COLON)) return false
  for (let i = 0; i < n; i++) if (buf[at + i] !== name[i]) return false
  return true
}

/**
 * A server-sent-event reader calling `onEvent` for each complete event (lines ending in LF or
 * CRLF, as Anthropic and every HTTP/1.1 SSE server send them). It keeps only the bytes of the
 * event being read; comments, `id` and `retry` fields are ignored.
 */
export function sseReader (onEvent: (event: SseEvent) => void): SseReader {
  /** Bytes of the event being read: its complete lines, then an unfinished one. */
  let pending: Buffer = EMPTY
  /** Where in `pending` the first unread line starts. */
  let scan = 0
  let name: string | undefined
  let data: Buffer[] = []

  const joined = (): Buffer => data.length === 1 ? data[0]! : Buffer.concat(data.flatMap((d, i) => i === 0 ? [d] : [NEWLINE, d]))

  function reset (): void {
    name = undefined
    data = []
  }

  function dispatch (): void {
    if (data.length > 0) onEvent({ name, data: joined() })
    reset()
  }

  function line (buf: Buffer, at: number, end: number): void {
    if (buf[at] === COLON) return
    const colon = buf.indexOf(COLON, at)
    let value = colon === -1 || colon >= end ? end : colon + 1
    if (value < end && buf[value] === SPACE) value++
    if (fieldIs(buf, at, end, DATA)) data.push(buf.subarray(value, end))
    else if (fieldIs(buf, at, end, EVENT)) name = buf.toString('utf8', value, end)
  }

  /** Reads the complete lines of `buf` from `scan`; returns the end of the last complete event. */
  function read (buf: Buffer): number {
    let boundary = 0
    let pos = scan
    for (;;) {
      const eol = buf.indexOf(LF, pos)
      if (eol === -1) break
      const end = eol > pos && buf[eol - 1] === CR ? eol - 1 : eol
      if (end === pos) {
        dispatch()
        boundary = eol + 1
      } else {
        line(buf, pos, end)
      }
      pos = eol + 1
    }
    scan = pos - boundary
    return boundary
  }

  return {
    push: (chunk) => {
      if (chunk.length === 0) return EMPTY
      const buf = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      // Lines before `scan` were read by an earlier push (their data still points at those bytes).
      const boundary = read(buf)
      pending = boundary >= buf.length ? EMPTY : buf.subarray(boundary)
      return boundary === 0 ? EMPTY : buf.subarray(0, boundary)
    },
    end: () => {
      const buf = pending
      pending = EMPTY
      if (buf.length === 0) return EMPTY
      const last = buf[buf.length - 1] === LF ? buf : Buffer.concat([buf, NEWLINE])
      const boundary = read(last)
      scan = 0
      if (boundary > 0) {
        // The missing line break made a blank line: that event is complete, anything after it is cut.
        reset()
        return last.subarray(0, boundary)
      }
      if (data.length === 0 || parseJson(joined().toString('utf8')) === undefined) {
        reset()
        return EMPTY
      }
      dispatch()
      return Buffer.concat([last, NEWLINE])
    }
  }
}
