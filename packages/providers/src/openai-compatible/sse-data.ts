import { lineEnd } from './stream.js'

const LF = 0x0a
const CR = 0x0d
const COLON = 0x3a
const EMPTY = Buffer.alloc(0)
const NEWLINE = Buffer.from('\n')

/** Reads the data of an upstream's server-sent events over any chunk boundaries. */
interface SseDataReader {
  /** Reads the complete lines of `bytes` (with what was held back before). */
  push: (bytes: Buffer) => void
  /** The stream ended: a last line without its newline counts, as does an event without its blank line. */
  end: () => void
}

/**
 * A reader of SSE data for converters of OpenAI chat streams. A data line that `handle` accepts
 * as a whole event (it returns true) is taken at once, so upstreams that omit blank lines still
 * stream; other data lines are gathered and handed to `handle`, joined by LF, at the event's
 * blank line; what `handle` refuses there goes to `unhandled`. LF, CRLF and CR all end a line;
 * comments are skipped; only the unfinished line and the event being gathered are held.
 */
export function sseDataReader (
  handle: (data: string, event: string | undefined) => boolean,
  unhandled: (data: string, event: string | undefined) => void
): SseDataReader {
  let pending: Buffer = EMPTY
  let data: string[] = []
  let eventName: string | undefined

  function line (buf: Buffer, from: number, to: number): void {
    if (from === to) {
      if (data.length > 0) {
        const payload = data.join('\n')
        if (!handle(payload, eventName)) unhandled(payload, eventName)
      }
      data = []
      eventName = undefined
      return
    }
    if (buf[from] === COLON) return
    const text = buf.toString('utf8', from, to)
    const colon = text.indexOf(':')
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? '' : text.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') {
      if (data.length > 0 || !handle(value, eventName)) data.push(value)
    } else if (field === 'event') {
      eventName = value
    }
  }

  /** Reads the complete lines of `buf`; returns where the first unfinished one starts. */
  function read (buf: Buffer, final: boolean): number {
    let pos = 0
    const anyCR = buf.indexOf(CR) !== -1
    for (;;) {
      const eol = lineEnd(buf, pos, anyCR)
      if (eol >= buf.length) return pos
      let after = eol + 1
      if (buf[eol] === CR) {
        // A CR at the very end may be the first half of a CRLF split across chunks.
        if (after >= buf.length && !final) return pos
        if (buf[after] === LF) after++
      }
      line(buf, pos, eol)
      pos = after
    }
  }

  return {
    push: (bytes) => {
      if (bytes.length === 0) return
      const buf = pending.length === 0 ? bytes : Buffer.concat([pending, bytes])
      const rest = read(buf, false)
      pending = rest >= buf.length ? EMPTY : buf.subarray(rest)
    },
    end: () => {
      if (pending.length > 0) {
        read(Buffer.concat([pending, NEWLINE]), true)
        pending = EMPTY
      }
      line(NEWLINE, 0, 0)
    }
  }
}
