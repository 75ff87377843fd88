import type { StreamConverter, Usage } from '../../core/adaptor.js'
import { contentText } from '../anthropic/response.js'
import { isRecord, list, num, str, type JsonRecord } from '../../core/json.js'
import { chatChunkReader } from '../../openai-compatible/chat-chunks.js'
import { readUsage } from '../../openai-compatible/usage.js'
import { streamConverter } from '../../core/stream-converter.js'
import { textKeeper } from '../../core/text-keeper.js'
import { geminiError } from './errors.js'
import { functionCallPart, geminiFinishReason, geminiUsageMetadata, responseId, type GeminiUsageMetadata } from './response.js'

const EMPTY = Buffer.alloc(0)

/**
 * How a Gemini stream is framed: `sse` (`?alt=sse`, what @google/genai asks for) sends each
 * response as `data: {json}\r\n\r\n`; `json` (no `alt`) sends one JSON array, `[` then the
 * responses separated by `,\r\n`, then `]`.
 */
type GeminiStreamMode = 'sse' | 'json'

/** The tool call being received (its arguments arrive in fragments). */
interface PendingCall {
  index: number
  id: string | undefined
  name: string
  args: string
}

/** The HTTP status of an OpenAI-style error object sent inside a stream (500 when it names none). */
function streamErrorStatus (error: JsonRecord): number {
  const status = num(error.code) ?? num(error.status)
  if (status !== undefined && status >= 400 && status < 600) return status
  const words = `${str(error.type) ?? ''} ${str(error.code) ?? ''}`.toLowerCase()
  if (words.includes('rate_limit')) return 429
  if (words.includes('overload')) return 503
  return 500
}

/**
 * Converts an OpenAI chat completions stream (server-sent events, `data: {chunk}` ...
 * `data: [DONE]`, cut anywhere into chunks) to a Gemini streamGenerateContent answer, framed as
 * `mode` says (GeminiStreamMode). Each output value is a GenerateContentResponse
 * (`candidates[0].content: {role: 'model', parts}`, `index: 0`, `modelVersion: model`,
 * `responseId`):
 *
 * - a text delta (content or refusal) → one `{text}` part;
 * - a reasoning delta (`reasoning_content` or `reasoning`) → one `{text, thought: true}` part;
 * - tool call fragments are gathered per call and sent as one `{functionCall: {id, name, args}}`
 *   part once the call is complete: when another call, text or the finish reason arrives
 *   (memory held: that call's arguments);
 * - the last value carries `finishReason` (geminiFinishReason), an empty text part, and
 *   `usageMetadata` (geminiUsageMetadata); it is sent once the finish reason and the usage that
 *   follows it have arrived, or at `[DONE]` or the end of input when no usage comes.
 *
 * Only the first choice is converted. An upstream error (an `error` event, or a chunk with an
 * `error` object) becomes a Google error value (`{error: {code, message, status}}`, geminiError)
 * in the same framing; so does a stream that ends with neither `[DONE]` nor a finish reason
 * (500 INTERNAL, CUT_STREAM_MESSAGE). Nothing is sent after the error or the last value; in
 * `json` mode the array is closed after either.
 *
 * Returns a full StreamConverter: `finished()` is true once the last value was sent, `usage()`
 * is the upstream's usage, `takeText()` the text, reasoning and tool arguments seen since the
 * last call. Constant memory apart from untaken text and one tool call's arguments.
 */
export function chatStreamToGemini (model: string, mode: GeminiStreamMode): StreamConverter {
  let out = ''
  /** Values sent so far (json mode: whether the array was opened). */
  let sent = 0

  let id: string | undefined
  let stopped = false
  let failed = false
  let finishReason: unknown
  let usage: Usage | undefined
  let metadata: GeminiUsageMetadata | undefined
  let call: PendingCall | undefined

  const kept = textKeeper()
  const keepText = kept.keep

  function emit (value: unknown): void {
    const json = JSON.stringify(value)
    if (mode === 'sse') out += `data: ${json}\r\n\r\n`
    else out += (sent === 0 ? '[' : ',\r\n') + json
    sent++
  }

  function closeArray (): void {
    if (mode === 'json') out += sent === 0 ? '[]' : ']'
  }

  function response (parts: unknown[], extra?: Record<string, unknown>): void {
    id ??= responseId(undefined)
    const candidate: Record<string, unknown> = { content: { role: 'model', parts }, ...extra, index: 0 }
    const value: Record<string, unknown> = { candidates: [candidate] }
    if (extra?.finishReason !== undefined) value.usageMetadata = metadata ?? { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 }
    value.modelVersion = model
    value.responseId = id
    emit(value)
  }

  function flushCall (): void {
    if (call === undefined) return
    response([functionCallPart(call.id, call.name, call.args)])
    call = undefined
  }

  function toolCall (value: unknown, fallbackIndex: number): void {
    if (!isRecord(value)) return
    const fn = isRecord(value.function) ? value.function : {}
    const index = num(value.index) ?? fallbackIndex
    const callId = str(value.id) || undefined
    if (call === undefined || index !== call.index || (callId !== undefined && call.id !== undefined && callId !== call.id)) {
      flushCall()
      call = { index, id: callId, name: '', args: '' }
    }
    call.id ??= callId
    const name = str(fn.name)
    if (name !== undefined && name !== '' && call.name === '') call.name = name
    const args = isRecord(fn.arguments) ? JSON.stringify(fn.arguments) : str(fn.arguments)
    if (args !== undefined && args !== '') {
      call.args += args
      keepText(args)
    }
  }

  function choice (value: JsonRecord): void {
    const d = isRecord(value.delta) ? value.delta : {}
    const reasoning = str(d.reasoning_content) || str(d.reasoning)
    if (reasoning !== undefined && reasoning !== '') {
      flushCall()
      response([{ text: reasoning, thought: true }])
      keepText(reasoning)
    }
    const text = contentText(d.content) + (str(d.refusal) ?? '')
    if (text !== '') {
      flushCall()
      response([{ text }])
      keepText(text)
    }
    list(d.tool_calls).forEach((c, position) => toolCall(c, position))
    if (isRecord(d.function_call)) toolCall({ function: d.function_call }, -1)
    const finish = value.finish_reason
    if (typeof finish === 'string' && finish !== '') {
      finishReason = finish
      flushCall()
    }
  }

  function stop (): void {
    if (stopped || failed) return
    flushCall()
    stopped = true
    response([{ text: '' }], { finishReason: geminiFinishReason(finishReason) })
    closeArray()
  }

  function fail (status: number, message: string): void {
    if (stopped || failed) return
    failed = true
    call = undefined
    emit(geminiError(status, message))
    closeArray()
  }

  const reader = chatChunkReader({
    chunk: (json) => {
      if (id === undefined && str(json.id) !== undefined && json.id !== '') id = responseId(json.id)
    },
    choice,
    usage: (raw) => {
      usage = readUsage(raw)
      metadata = geminiUsageMetadata(raw)
    },
    done: stop,
    error: (error) => { fail(streamErrorStatus(error), str(error.message) ?? 'The upstream reported an error') },
    ended: () => stopped || failed
  })

  function flush (): Buffer {
    const bytes = out === '' ? EMPTY : Buffer.from(out)
    out = ''
    return bytes
  }

  return streamConverter(reader, { flush, usage: () => usage, finished: () => stopped, text: kept })
}
