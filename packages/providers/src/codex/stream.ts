import type { RelayRequest, StreamConverter, Usage } from '../core/adaptor.js'
import { at, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { sseReader } from '../claude/index.js'
import { errorChunk } from '../core/openai-shapes.js'
import { outbox, streamConverter } from '../core/stream-converter.js'
import { textKeeper } from '../core/text-keeper.js'
import { chatUsage, codexTokens, finishReasonOf, type CodexTokens } from './response.js'

const DONE = 'data: [DONE]\n\n'

/** Events that end a Responses stream normally. */
const TERMINAL = new Set(['response.completed', 'response.incomplete'])

/** Events whose `delta` is completion text (for counting when no usage comes). */
const TEXT_DELTAS = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
  'response.function_call_arguments.delta'
])

/** A function call being streamed. */
interface OpenCall {
  /** Its place among the answer's tool calls (OpenAI's `index`). */
  index: number
  /** Whether argument fragments came (else the arguments of `output_item.done` are sent whole). */
  fragments: boolean
}

/** Calls `event` with each complete event's parsed data and name, over any chunk boundaries. */
function eventReader (event: (json: JsonRecord, name: string | undefined, data: string) => void): { push: (bytes: Buffer) => void, end: () => void } {
  const reader = sseReader((sse) => {
    const data = sse.data.toString('utf8')
    const json = parseJson(data)
    if (isRecord(json)) event(json, sse.name, data)
  })
  return { push: (bytes) => { reader.push(bytes) }, end: () => { reader.end() } }
}

/**
 * Converts the backend's Responses stream into OpenAI chat.completion.chunk events, one by one:
 * a role chunk, then content (`output_text`), `refusal`, `reasoning_content` (reasoning summary
 * and text deltas) and tool call deltas (id and name when the call's item is added, then
 * argument fragments, with OpenAI's tool call indexes), the finish reason, a usage chunk and
 * `data: [DONE]` on `response.completed` or `response.incomplete`. Nothing is sent before the
 * first content, so a stream that fails at once (`response.failed`, `error`) can be retried on
 * another channel; a later failure goes to the client as an OpenAI error chunk. Keeps only the
 * open tool calls and the text not yet taken.
 */
export function createCodexChatStream (req: RelayRequest): StreamConverter {
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…` without its closing brace. */
  let prefix: string | undefined
  let roleSent = false
  let done = false
  let failed = false
  const calls = new Map<number, OpenCall>()
  let callCount = 0
  let tokens: CodexTokens | undefined
  const text = textKeeper()
  const out = outbox()

  function setPrefix (response: unknown): void {
    const id = str(at(response, 'id')) ?? ''
    const model = str(at(response, 'model')) ?? req.model
    const created = num(at(response, 'created_at')) ?? Math.floor(Date.now() / 1000)
    prefix = JSON.stringify({ id, object: 'chat.completion.chunk', created, model }).slice(0, -1)
  }

  function chunk (delta: JsonRecord, finish: string | null = null): void {
    if (prefix === undefined) setPrefix(undefined)
    if (!roleSent) {
      roleSent = true
      out.push(`data: ${prefix},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`)
    }
    out.push(`data: ${prefix},"choices":[{"index":0,"delta":${JSON.stringify(delta)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`)
  }

  function piece (key: 'content' | 'refusal' | 'reasoning_content', value: string): void {
    if (value === '') return
    chunk({ [key]: value })
    text.keep(value)
  }

  function callArguments (call: OpenCall, fragment: string): void {
    if (fragment === '') return
    chunk({ tool_calls: [{ index: call.index, function: { arguments: fragment } }] })
    text.keep(fragment)
  }

  function openCall (outputIndex: number, item: JsonRecord): OpenCall {
    const call: OpenCall = { index: callCount++, fragments: false }
    calls.set(outputIndex, call)
    chunk({ tool_calls: [{ index: call.index, id: str(item.call_id) ?? str(item.id) ?? '', type: 'function', function: { name: str(item.name) ?? '', arguments: '' } }] })
    return call
  }

  function fail (json: JsonRecord): void {
    failed = true
    if (!roleSent) return
    const error = isRecord(json.error) ? json.error : isRecord(at(json, 'response', 'error')) ? at(json, 'response', 'error') as JsonRecord : json
    const code = str(error.code) ?? str(error.type) ?? 'upstream_error'
    out.push(errorChunk(str(error.message) ?? 'upstream error', code))
  }

  const reader = eventReader((json, name) => {
    if (done || failed) return
    const type = str(json.type) ?? name
    const outputIndex = num(json.output_index) ?? 0
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
        if (prefix === undefined) setPrefix(json.response)
        break
      case 'response.output_item.added': {
        const item = isRecord(json.item) ? json.item : {}
        if (item.type === 'function_call') openCall(outputIndex, item)
        break
      }
      case 'response.output_text.delta':
        piece('content', str(json.delta) ?? '')
        break
      case 'response.refusal.delta':
        piece('refusal', str(json.delta) ?? '')
        break
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        piece('reasoning_content', str(json.delta) ?? '')
        break
      case 'response.function_call_arguments.delta': {
        const call = calls.get(outputIndex)
        const fragment = str(json.delta) ?? ''
        if (call !== undefined && fragment !== '') {
          call.fragments = true
          callArguments(call, fragment)
        }
        break
      }
      case 'response.output_item.done': {
        const item = isRecord(json.item) ? json.item : {}
        if (item.type !== 'function_call') break
        // A call announced only when done is sent whole.
        const call = calls.get(outputIndex) ?? openCall(outputIndex, item)
        calls.delete(outputIndex)
        if (!call.fragments) callArguments(call, str(item.arguments) ?? '')
        break
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = json.response
        tokens = codexTokens(at(response, 'usage'))
        chunk({}, finishReasonOf(response, callCount))
        if (tokens !== undefined) out.push(`data: ${prefix},"choices":[],"usage":${JSON.stringify(chatUsage(tokens))}}\n\n`)
        out.push(DONE)
        done = true
        break
      }
      case 'response.failed':
      case 'error':
        fail(json)
        break
      default:
        // Content part and item bookkeeping, rate-limit notices, event types added later.
        break
    }
  })

  return streamConverter(reader, { flush: out.flush, usage: () => tokens?.usage, finished: () => done, text })
}

/**
 * Output items kept at most (bytes of their JSON) to fill an empty `output` of the final event;
 * past it the final event goes as the backend sent it.
 */
export const MAX_BACKFILL_BYTES = 4 * 1024 * 1024

/**
 * Relays the backend's Responses stream to a Responses client event by event, each written as
 * `event: <type>` and its data line; usage is read from the final event, text from the deltas.
 * The backend's `response.completed` (or `response.incomplete`) may carry an empty `output`: it
 * is filled with the items of the `response.output_item.done` events, so clients that take the
 * final event's response as the answer (the openai SDK's `responses.stream()`) get one. Those
 * items are the only part of the answer held, up to MAX_BACKFILL_BYTES.
 */
export function createCodexResponsesStream (): StreamConverter {
  let items: Array<{ index: number, item: unknown }> = []
  let itemBytes = 0
  let overflow = false
  let usage: Usage | undefined
  let done = false
  const text = textKeeper()
  const out = outbox()

  function backfilled (json: JsonRecord, data: string): string {
    const response = json.response
    if (!isRecord(response) || list(response.output).length > 0 || items.length === 0 || overflow) return data
    const output = items.sort((a, b) => a.index - b.index).map((entry) => entry.item)
    return JSON.stringify({ ...json, response: { ...response, output } })
  }

  const reader = eventReader((json, name, data) => {
    if (done) return
    const type = str(json.type) ?? name ?? 'message'
    let payload = data
    if (TEXT_DELTAS.has(type)) text.keep(str(json.delta) ?? '')
    else if (type === 'response.output_item.done' && !overflow) {
      itemBytes += data.length
      if (itemBytes > MAX_BACKFILL_BYTES) {
        overflow = true
        items = []
      } else {
        items.push({ index: num(json.output_index) ?? items.length, item: json.item })
      }
    } else if (TERMINAL.has(type) || type === 'response.failed') {
      usage = codexTokens(at(json, 'response', 'usage'))?.usage
      if (TERMINAL.has(type)) {
        payload = backfilled(json, data)
        done = true
        items = []
      }
    }
    out.push(`event: ${type}\ndata: ${payload}\n\n`)
  })

  return streamConverter(reader, { flush: out.flush, usage: () => usage, finished: () => done, text })
}
