import type { StreamConverter, Usage } from '../../core/adaptor.js'
import { contentText, isRecord, list, num, str, type JsonRecord } from '../../core/json.js'
import { chatChunkReader } from '../../openai-compatible/chat-chunks.js'
import { readUsage } from '../../openai-compatible/usage.js'
import { streamConverter } from '../../core/stream-converter.js'
import { textKeeper } from '../../core/text-keeper.js'
import { customToolNames } from './request.js'
import {
  callIdFor,
  customInput,
  itemId,
  outputText,
  responseId,
  responseShell,
  responseStatus,
  responsesUsage,
  toolCallItem,
  toolItemId,
  type ResponsesUsage
} from './response.js'

type Json = Record<string, unknown>

const EMPTY = Buffer.alloc(0)

/** The output item being streamed. */
type OpenItem =
  | { kind: 'message', id: string, index: number, pieces: string[] }
  | { kind: 'reasoning', id: string, index: number, pieces: string[] }
  | { kind: 'tool', id: string, index: number, pieces: string[], callIndex: number, callId: string, name: string, custom: boolean }

/** The Responses API's error code for an OpenAI-style error object sent inside a chat stream. */
function streamErrorCode (error: JsonRecord): 'rate_limit_exceeded' | 'server_error' {
  const status = num(error.code) ?? num(error.status)
  const words = `${str(error.type) ?? ''} ${str(error.code) ?? ''}`.toLowerCase()
  return status === 429 || words.includes('rate_limit') ? 'rate_limit_exceeded' : 'server_error'
}

/**
 * Converts an OpenAI chat completions stream (server-sent events, `data: {chunk}` ...
 * `data: [DONE]`, cut anywhere into chunks) to a Responses API stream, in the order the
 * Responses API emits its events, each as `event: <type>` and `data: {type, sequence_number, ...}`
 * (sequence numbers from 0):
 *
 * - `response.created` and `response.in_progress` on the first chunk (the `response` object of
 *   responseShell, status in_progress, output empty);
 * - one output item per run of reasoning (`delta.reasoning_content` or `delta.reasoning`), of text
 *   (content and refusal) and per tool call (a new tool-call index or id starts the next):
 *   `response.output_item.added`, then for reasoning `response.content_part.added` (a
 *   `reasoning_text` part) and `response.reasoning_text.delta`s, for text
 *   `response.content_part.added` (`output_text`) and `response.output_text.delta`s, for a
 *   function call (`call_id` and `name` in the added item) `response.function_call_arguments.delta`s;
 *   the item ends, when the next begins or the finish reason comes, with
 *   `response.reasoning_text.done` / `response.output_text.done` and `response.content_part.done`,
 *   or `response.function_call_arguments.done`, then `response.output_item.done` with the whole
 *   item. Calls of the request's custom tools become `custom_tool_call` items whose input is sent
 *   whole (`response.custom_tool_call_input.delta` and `.done`) when the call ends;
 * - `response.completed` (or `response.incomplete` when the finish reason is length or
 *   content_filter) with the whole response: status, every output item, usage (responsesUsage),
 *   once the finish reason and the usage that follows it have arrived, or at `[DONE]` or the end
 *   of input when no usage comes.
 *
 * Only the first choice is converted. An upstream error (an `error` event, or a chunk with an
 * `error` object) becomes an `error` event then `response.failed` (error code server_error or
 * rate_limit_exceeded); so does a stream that ends with neither `[DONE]` nor a finish reason,
 * with CUT_STREAM_MESSAGE. Nothing is sent after `response.failed` or the final event.
 *
 * Returns a full StreamConverter: `finished()` is true once the final event was sent, `usage()`
 * is the upstream's usage, `takeText()` the text, reasoning and tool arguments seen since the
 * last call. Memory: the unfinished line, the output items (the final event repeats them whole,
 * as the protocol wants, so they are the answer's text) and the request's settings it echoes.
 */
export function chatStreamToResponses (model: string, request?: Readonly<Record<string, unknown>>): StreamConverter {
  const custom = customToolNames(request)
  let out = ''
  let sequence = 0

  let shell: Json | undefined
  let id = ''
  let stopped = false
  let failed = false
  let finishReason: unknown
  let usage: Usage | undefined
  let wireUsage: ResponsesUsage | undefined

  /** The finished output items, which the final event repeats. */
  const items: Json[] = []
  let open: OpenItem | undefined
  const text = textKeeper()

  function event (type: string, data: Json): void {
    out += `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`
  }

  function start (chunk: JsonRecord | undefined): Json {
    if (shell !== undefined) return shell
    id = responseId(chunk?.id)
    shell = responseShell(request, model, id, num(chunk?.created) ?? Math.floor(Date.now() / 1000))
    event('response.created', { response: shell })
    event('response.in_progress', { response: shell })
    return shell
  }

  function openItem (kind: 'message' | 'reasoning'): OpenItem {
    closeItem()
    const index = items.length
    const item: OpenItem = kind === 'message'
      ? { kind, id: itemId('msg', id, index), index, pieces: [] }
      : { kind, id: itemId('rs', id, index), index, pieces: [] }
    const added = kind === 'message'
      ? { id: item.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] }
      : { id: item.id, type: 'reasoning', summary: [] }
    event('response.output_item.added', { output_index: index, item: added })
    event('response.content_part.added', {
      item_id: item.id, output_index: index, content_index: 0, part: kind === 'message' ? outputText('') : { type: 'reasoning_text', text: '' }
    })
    open = item
    return item
  }

  function closeItem (): void {
    const item = open
    if (item === undefined) return
    open = undefined
    const whole = item.pieces.join('')
    const at = { item_id: item.id, output_index: item.index }
    let done: Json
    if (item.kind === 'message') {
      event('response.output_text.done', { ...at, content_index: 0, text: whole, logprobs: [] })
      event('response.content_part.done', { ...at, content_index: 0, part: outputText(whole) })
      done = { id: item.id, type: 'message', status: responseStatus(finishReason).status, role: 'assistant', content: [outputText(whole)] }
    } else if (item.kind === 'reasoning') {
      const part = { type: 'reasoning_text', text: whole }
      event('response.reasoning_text.done', { ...at, content_index: 0, text: whole })
      event('response.content_part.done', { ...at, content_index: 0, part })
      done = { id: item.id, type: 'reasoning', summary: [], content: [part] }
    } else if (item.custom) {
      const input = customInput(whole)
      if (input !== '') event('response.custom_tool_call_input.delta', { ...at, delta: input })
      event('response.custom_tool_call_input.done', { ...at, input })
      done = toolCallItem(item.id, item.callId, item.name, whole, true, 'completed')
    } else {
      event('response.function_call_arguments.done', { ...at, name: item.name, arguments: whole })
      done = toolCallItem(item.id, item.callId, item.name, whole, false, 'completed')
    }
    event('response.output_item.done', { output_index: item.index, item: done })
    items.push(done)
  }

  function toolCall (call: unknown, fallbackIndex: number): void {
    if (!isRecord(call)) return
    const fn = isRecord(call.function) ? call.function : {}
    const index = num(call.index) ?? fallbackIndex
    const callId = str(call.id) || undefined
    let item = open
    if (item?.kind !== 'tool' || index !== item.callIndex || (callId !== undefined && callId !== item.callId)) {
      closeItem()
      const name = str(fn.name) ?? ''
      const isCustom = custom.has(name)
      const itemIndex = items.length
      const toolId = toolItemId(id, itemIndex, isCustom)
      item = { kind: 'tool', id: toolId, index: itemIndex, pieces: [], callIndex: index, callId: callId ?? callIdFor(toolId), name, custom: isCustom }
      event('response.output_item.added', { output_index: itemIndex, item: toolCallItem(toolId, item.callId, name, '', isCustom, 'in_progress') })
      open = item
    }
    const args = isRecord(fn.arguments) ? JSON.stringify(fn.arguments) : str(fn.arguments)
    if (args !== undefined && args !== '') {
      item.pieces.push(args)
      if (!item.custom) event('response.function_call_arguments.delta', { item_id: item.id, output_index: item.index, delta: args })
      text.keep(args)
    }
  }

  function choice (value: JsonRecord): void {
    const d = isRecord(value.delta) ? value.delta : {}
    const reasoning = str(d.reasoning_content) || str(d.reasoning)
    if (reasoning !== undefined && reasoning !== '') {
      const item = open?.kind === 'reasoning' ? open : openItem('reasoning')
      item.pieces.push(reasoning)
      event('response.reasoning_text.delta', { item_id: item.id, output_index: item.index, content_index: 0, delta: reasoning })
      text.keep(reasoning)
    }
    const delta = contentText(d.content) + (str(d.refusal) ?? '')
    if (delta !== '') {
      const item = open?.kind === 'message' ? open : openItem('message')
      item.pieces.push(delta)
      event('response.output_text.delta', { item_id: item.id, output_index: item.index, content_index: 0, delta, logprobs: [] })
      text.keep(delta)
    }
    // A call without an index (some upstreams) is told apart by its place in the list.
    list(d.tool_calls).forEach((call, position) => toolCall(call, position))
    // The legacy single function call has no index: -1 keeps its fragments in one item.
    if (isRecord(d.function_call)) toolCall({ function: d.function_call }, -1)
    const finish = value.finish_reason
    if (typeof finish === 'string' && finish !== '') {
      finishReason = finish
      closeItem()
    }
  }

  function stop (): void {
    if (stopped || failed) return
    const base = start(undefined)
    closeItem()
    stopped = true
    const { status, incomplete_details } = responseStatus(finishReason)
    event(status === 'completed' ? 'response.completed' : 'response.incomplete', {
      response: { ...base, status, incomplete_details, output: items, usage: wireUsage ?? null }
    })
  }

  function fail (error: JsonRecord): void {
    if (stopped || failed) return
    const base = start(undefined)
    failed = true
    open = undefined
    const message = str(error.message) ?? 'The upstream reported an error'
    const code = streamErrorCode(error)
    event('error', { code: str(error.code) ?? code, message, param: null })
    event('response.failed', { response: { ...base, status: 'failed', error: { code, message }, output: items, usage: wireUsage ?? null } })
  }

  const reader = chatChunkReader({
    chunk: (json) => { start(json) },
    choice,
    usage: (raw) => {
      usage = readUsage(raw)
      wireUsage = responsesUsage(raw)
    },
    done: stop,
    error: fail,
    ended: () => stopped || failed
  })

  function flush (): Buffer {
    const bytes = out === '' ? EMPTY : Buffer.from(out)
    out = ''
    return bytes
  }

  return streamConverter(reader, { flush, usage: () => usage, finished: () => stopped, text })
}
