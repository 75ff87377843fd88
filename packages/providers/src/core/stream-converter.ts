// The parts every converting stream shares: the bytes written for the client until the next
// push, and the StreamConverter made of a framing's reader and the converter's state.
import type { StreamConverter } from './adaptor.js'

const EMPTY = Buffer.alloc(0)

/** Text written for the client, held until the converter hands it over. */
interface Outbox {
  push: (text: string) => void
  /** The text written since the last call, as bytes (empty when there is none). */
  flush: () => Buffer
}

export function outbox (): Outbox {
  let out: string[] = []
  return {
    push: (text) => { out.push(text) },
    flush: () => {
      if (out.length === 0) return EMPTY
      const bytes = Buffer.from(out.length === 1 ? out[0]! : out.join(''))
      out = []
      return bytes
    }
  }
}

/** Text a converter keeps for the gateway to count (a textKeeper, or a writer's). */
export interface KeptText {
  take: () => string
  bytes: () => number
}

/** A converter's state, for {@link streamConverter}. */
interface ConverterParts {
  /** The converted bytes written since the last call. */
  flush: () => Buffer
  usage: StreamConverter['usage']
  finished: StreamConverter['finished']
  /** The one keeper of the converter's text. */
  text: KeptText
}

/** The framing's reader: it reads upstream bytes and calls the converter for each event. */
interface FramedReader {
  push: (bytes: Buffer) => unknown
  end: () => unknown
}

/** A StreamConverter that feeds `reader` and answers with what the converter wrote meanwhile. */
export function streamConverter (reader: FramedReader, parts: ConverterParts): StreamConverter {
  const { flush, text } = parts
  return {
    push: (bytes) => {
      reader.push(bytes)
      return flush()
    },
    end: () => {
      reader.end()
      return flush()
    },
    usage: parts.usage,
    takeText: () => text.take(),
    untakenBytes: () => text.bytes(),
    finished: parts.finished
  }
}
