import type { ConvertedResponse, RelayRequest, StreamConverter } from '../core/adaptor.js'
import { isRecord, list, parseJson, str, type JsonRecord } from '../core/json.js'

const EMPTY = Buffer.alloc(0)
/** Largest answer a stream converter holds while waiting for it to be complete. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024
const CLOSING_BRACE = 0x7d
const WHITE_SPACE: ReadonlySet<number> = new Set([0x20, 0x09, 0x0a, 0x0d])

interface PalmChoice {
  index: number
  content: string
  finish: string
}

/**
 * The choices of a PaLM generateMessage answer (`{candidates: [{author, content}], filters}`):
 * one per candidate, finished by `stop`; an answer the safety filters emptied is one empty
 * choice finished by `content_filter`. Undefined when `json` is no such answer.
 */
function choicesOf (json: unknown): PalmChoice[] | undefined {
  if (!isRecord(json) || (!Array.isArray(json.candidates) && !Array.isArray(json.filters) && !Array.isArray(json.messages))) return undefined
  const choices: PalmChoice[] = []
  for (const candidate of list(json.candidates)) {
    if (!isRecord(candidate)) continue
    choices.push({ index: choices.length, content: str(candidate.content) ?? '', finish: 'stop' })
  }
  if (choices.length === 0) choices.push({ index: 0, content: '', finish: list(json.filters).length > 0 ? 'content_filter' : 'stop' })
  return choices
}

const completionId = (): string => `chatcmpl-palm${Date.now().toString(36)}`

/**
 * A PaLM answer as an OpenAI chat completion, without usage (PaLM reports none: the gateway
 * counts the tokens, from `text`). A body that is no PaLM answer is forwarded unchanged.
 */
export function convertPalmMessage (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const choices = choicesOf(parseJson(body.toString('utf8')))
  if (choices === undefined) return { status, contentType: contentType || 'application/json', body }
  const answer = {
    id: completionId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: req.model,
    choices: choices.map((choice) => ({ index: choice.index, message: { role: 'assistant', content: choice.content }, logprobs: null, finish_reason: choice.finish }))
  }
  return { status, contentType: 'application/json', body: JSON.stringify(answer), text: choices.map((choice) => choice.content).join('') }
}

/**
 * PaLM cannot stream: a streamed request is sent as a plain one and its complete JSON answer,
 * once it has all arrived, goes to the client as OpenAI chunk events (per choice: the role, the
 * whole text, the finish reason) and `data: [DONE]`; finished only then, so an answer cut short
 * is never taken for complete. The answer is held until it is complete (PaLM's are small; past
 * 8 MiB it is given up). No usage: the gateway counts the text.
 */
export function createPalmStream (req: RelayRequest): StreamConverter {
  let held: Buffer[] = []
  let size = 0
  let text = ''
  let done = false

  function events (choices: PalmChoice[]): Buffer {
    const head = JSON.stringify({ id: completionId(), object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: req.model }).slice(0, -1)
    const chunk = (index: number, delta: JsonRecord, finish: string | null): string =>
      `data: ${head},"choices":[{"index":${index},"delta":${JSON.stringify(delta)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`
    let out = ''
    for (const choice of choices) {
      out += chunk(choice.index, { role: 'assistant', content: '' }, null)
      if (choice.content !== '') out += chunk(choice.index, { content: choice.content }, null)
      out += chunk(choice.index, {}, choice.finish)
    }
    return Buffer.from(`${out}data: [DONE]\n\n`)
  }

  /** The last byte held that is not white space (-1 when none). */
  function lastByte (): number {
    for (let i = held.length - 1; i >= 0; i--) {
      const piece = held[i]!
      for (let j = piece.length - 1; j >= 0; j--) if (!WHITE_SPACE.has(piece[j]!)) return piece[j]!
    }
    return -1
  }

  /** Converts the held answer once it parses (tried only when its last byte closes an object). */
  function complete (): Buffer {
    if (lastByte() !== CLOSING_BRACE) return EMPTY
    const choices = choicesOf(parseJson(Buffer.concat(held).toString('utf8')))
    if (choices === undefined) return EMPTY
    held = []
    size = 0
    done = true
    text = choices.map((choice) => choice.content).join('')
    return events(choices)
  }

  return {
    push: (chunk) => {
      if (done || chunk.length === 0) return EMPTY
      size += chunk.length
      if (size > MAX_ANSWER_BYTES) {
        held = []
        return EMPTY
      }
      held.push(chunk)
      return complete()
    },
    end: () => (done ? EMPTY : complete()),
    usage: () => undefined,
    takeText: () => {
      const taken = text
      text = ''
      return taken
    },
    untakenBytes: () => text.length,
    finished: () => done
  }
}

/**
 * Whether an answer to a streamed request is PaLM's (JSON): it then goes through the stream
 * converter, so OpenAI streaming clients get events even though PaLM sent one whole answer.
 */
export function isPalmAnswer (contentType: string): boolean {
  return /json/i.test(contentType)
}
