import { at, isRecord, list, num, type JsonRecord } from '../core/json.js'
import { templatedJson, type TemplateSpec } from '../core/templated-json.js'
import { sseDataReader } from './sse-data.js'
import { readUsage } from './usage.js'

/** The message of the error sent when the upstream's stream stops before its end. */
export const CUT_STREAM_MESSAGE = 'The upstream stream ended before the answer was complete'

/**
 * A chunk's text: choice 0's delta content. The stream's first chunk (with the role) and its last
 * (with the finish reason) differ from the chunks between them: no template is made of them.
 */
export const CHUNK_TEXT: TemplateSpec = {
  path: ['choices', 0, 'delta', 'content'],
  learnable: (json) => {
    const choice = at(json, 'choices', 0)
    if (!isRecord(choice) || !isRecord(choice.delta) || choice.delta.role !== undefined) return false
    return typeof choice.finish_reason !== 'string' || choice.finish_reason === ''
  }
}

/** What a converter of an OpenAI chat stream does with its events, for {@link chatChunkReader}. */
interface ChatChunkHandlers {
  /** Each chunk, before its choices (the first one may start the client's answer). */
  chunk: (json: JsonRecord) => void
  /** The choice of index 0 of a chunk (only the first choice is converted). */
  choice: (value: JsonRecord) => void
  /** The usage object the upstream reported: a chunk's `usage`, else its choice's (Moonshot). */
  usage: (raw: unknown) => void
  /** The answer is complete: `[DONE]`, the usage after the finish reason, or a finish at the end. */
  done: () => void
  /** An `error` event or a chunk's `error` object; a stream cut before its end gives `{message: CUT_STREAM_MESSAGE}`. */
  error: (error: JsonRecord) => void
  /** Whether done() or error() ended the answer: nothing is read after that. */
  ended: () => boolean
}

/**
 * Reads an OpenAI chat completions stream (server-sent events, `data: {chunk}` ... `data: [DONE]`,
 * cut anywhere into chunks) for a converter to another protocol. The answer is done once the
 * finish reason and the usage that follows it have arrived (OpenAI sends the usage in a chunk of
 * its own after the finish; others with it), at `[DONE]`, or at the end of input after a finish
 * reason; an input that ends with neither is an error. Keeps only the unfinished event (and the
 * shape of the last chunk, see {@link templatedJson}).
 */
export function chatChunkReader (h: ChatChunkHandlers): { push: (bytes: Buffer) => void, end: () => void } {
  let finishSeen = false
  let usageAfterFinish = false
  const { parse } = templatedJson(CHUNK_TEXT)

  function chunk (json: JsonRecord): void {
    if (isRecord(json.error)) {
      h.error(json.error)
      return
    }
    h.chunk(json)
    let seen: unknown = readUsage(json.usage) === undefined ? undefined : json.usage
    for (const value of list(json.choices)) {
      if (!isRecord(value) || (num(value.index) ?? 0) !== 0) continue
      h.choice(value)
      if (typeof value.finish_reason === 'string' && value.finish_reason !== '') finishSeen = true
      if (seen === undefined && readUsage(value.usage) !== undefined) seen = value.usage
    }
    if (seen !== undefined) {
      h.usage(seen)
      if (finishSeen) usageAfterFinish = true
    }
    if (finishSeen && usageAfterFinish) h.done()
  }

  /** Handles one event's data; false when it is not a complete value (a piece of a multi-line event). */
  function handle (payload: string, name: string | undefined): boolean {
    if (payload.length < 16 && payload.trim() === '[DONE]') {
      h.done()
      return true
    }
    const json = parse(payload)
    if (!isRecord(json)) return false
    if (h.ended()) return true
    if (name === 'error') h.error(isRecord(json.error) ? json.error : json)
    else chunk(json)
    return true
  }

  const reader = sseDataReader(handle, (payload, name) => { if (name === 'error') h.error({ message: payload }) })
  return {
    push: (bytes) => { reader.push(bytes) },
    end: () => {
      // A last line without its newline, and an event without its blank line, still count.
      reader.end()
      if (!h.ended()) {
        if (finishSeen) h.done()
        else h.error({ message: CUT_STREAM_MESSAGE })
      }
    }
  }
}
