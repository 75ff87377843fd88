import type { StreamConverter, Usage } from '../../core/adaptor.js'
import { isRecord, list, num, str, type JsonRecord } from '../../core/json.js'
import { chatChunkReader, CUT_STREAM_MESSAGE } from '../../openai-compatible/chat-chunks.js'
import { readUsage } from '../../openai-compatible/usage.js'
import { streamConverter } from '../../core/stream-converter.js'
import { textKeeper } from '../../core/text-keeper.js'
import { anthropicErrorType } from './errors.js'
import { anthropicId, anthropicStopReason, anthropicUsage, contentText, messageId } from './response.js'

const EMPTY = Buffer.alloc(0)

export { CUT_STREAM_MESSAGE }

/** One Anthropic server-sent event. */
const sse = (type: string, data: unknown): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`

// The fixed parts of a stream, written once (a stream is mostly small events).
const MESSAGE_STOP = sse('message_stop', { type: 'message_stop' })
const TEXT_BLOCK = JSON.stringify({ type: 'text', text: '' })
const THINKING_BLOCK = JSON.stringify({ type: 'thinking', thinking: '', signature: '' })

/** Anthropic's error type for an OpenAI-style error object sent inside a stream. */
function streamErrorType (error: JsonRecord): string {
  const status = num(error.code) ?? num(error.status)
  if (status !== undefined && status >= 400) return anthropicErrorType(status)
  const words = `${str(error.type) ?? ''} ${str(error.code) ?? ''}`.toLowerCase()
  if (words.includes('rate_limit')) return 'rate_limit_error'
  if (words.includes('overload')) return 'overloaded_error'
  return 'api_error'
}

/**
 * Converts an OpenAI chat completions stream (server-sent events, `data: {chunk}` ...
 * `data: [DONE]`, cut anywhere into chunks) to an Anthropic Messages stream, event by event:
 *
 * - `message_start` on the first chunk (its input tokens from that chunk's usage, if any);
 * - one content block per run of reasoning (`delta.reasoning_content` or `delta.reasoning`,
 *   sent as a `thinking` block with `thinking_delta`s), of text (`text_delta`), and per tool
 *   call (`tool_use` started with its id, name and empty input, then `input_json_delta`s of the
 *   argument fragments; a new tool-call index or id starts the next block);
 * - `message_delta` (stop_reason, usage: input, output and cache-read tokens) once the finish
 *   reason and the usage that follows it have arrived, or at `[DONE]` or the end of input when
 *   no usage comes, then `message_stop`.
 *
 * Only the first choice is converted. An upstream error (an `error` event, or a chunk with an
 * `error` object) becomes an Anthropic `error` event; so does a stream that ends with neither
 * `[DONE]` nor a finish reason (the upstream died), with `CUT_STREAM_MESSAGE`. Nothing is sent
 * after an `error` event or `message_stop`.
 *
 * Returns a full StreamConverter: `finished()` is true once `message_stop` was sent, `usage()`
 * is the upstream's usage, `takeText()` the text, reasoning and tool arguments seen since the
 * last call. Constant memory apart from untaken text: it keeps the unfinished line and the
 * event being read, never the answer.
 */
export function chatStreamToAnthropic (model: string): StreamConverter {
  /** Events produced by the current push() or end(). */
  let out = ''

  let started = false
  let stopped = false
  let failed = false
  let finishReason: unknown
  let calledTools = false
  let usage: Usage | undefined

  /** Index of the next content block; the open one (if any) is `next - 1`. */
  let next = 0
  let open: 'text' | 'thinking' | 'tool_use' | undefined
  let openToolIndex: number | undefined
  let openToolId: string | undefined

  const kept = textKeeper()
  const keepText = kept.keep

  function start (chunk: JsonRecord | undefined): void {
    if (started) return
    started = true
    const first = chunk === undefined ? undefined : readUsage(chunk.usage)
    out += sse('message_start', {
      type: 'message_start',
      message: {
        id: messageId(chunk?.id),
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...anthropicUsage(first), output_tokens: 0 }
      }
    })
  }

  function closeBlock (): void {
    if (open === undefined) return
    out += `event: content_block_stop\ndata: {"type":"content_block_stop","index":${next - 1}}\n\n`
    open = undefined
    openToolIndex = undefined
    openToolId = undefined
  }

  /** Starts a block; `block` is its `content_block` as JSON. */
  function openBlock (kind: 'text' | 'thinking' | 'tool_use', block: string): void {
    closeBlock()
    open = kind
    out += `event: content_block_start\ndata: {"type":"content_block_start","index":${next},"content_block":${block}}\n\n`
    next++
  }

  /**
   * A `content_block_delta` of the open block carrying `value` as its one `field`. Written
   * directly: the same bytes as sse() of the event object, for a third of its cost, and a stream
   * is mostly these.
   */
  function delta (type: 'input_json_delta' | 'thinking_delta' | 'text_delta', field: 'partial_json' | 'thinking' | 'text', value: string): void {
    out += `event: content_block_delta\ndata: {"type":"content_block_delta","index":${next - 1},"delta":{"type":"${type}","${field}":${JSON.stringify(value)}}}\n\n`
  }

  function toolCall (call: unknown, fallbackIndex: number): void {
    if (!isRecord(call)) return
    const fn = isRecord(call.function) ? call.function : {}
    const index = num(call.index) ?? fallbackIndex
    const id = str(call.id) || undefined
    if (open !== 'tool_use' || index !== openToolIndex || (id !== undefined && id !== openToolId)) {
      const toolId = id ?? anthropicId('toolu_')
      openBlock('tool_use', JSON.stringify({ type: 'tool_use', id: toolId, name: str(fn.name) ?? '', input: {} }))
      openToolIndex = index
      openToolId = toolId
      calledTools = true
    }
    const args = isRecord(fn.arguments) ? JSON.stringify(fn.arguments) : str(fn.arguments)
    if (args !== undefined && args !== '') {
      delta('input_json_delta', 'partial_json', args)
      keepText(args)
    }
  }

  function choice (value: JsonRecord): void {
    const d = isRecord(value.delta) ? value.delta : {}
    const reasoning = str(d.reasoning_content) || str(d.reasoning)
    if (reasoning !== undefined && reasoning !== '') {
      if (open !== 'thinking') openBlock('thinking', THINKING_BLOCK)
      delta('thinking_delta', 'thinking', reasoning)
      keepText(reasoning)
    }
    const text = contentText(d.content) + (str(d.refusal) ?? '')
    if (text !== '') {
      if (open !== 'text') openBlock('text', TEXT_BLOCK)
      delta('text_delta', 'text', text)
      keepText(text)
    }
    // A call without an index (some upstreams) is told apart by its place in the list.
    list(d.tool_calls).forEach((call, position) => toolCall(call, position))
    // The legacy single function call has no index: -1 keeps its fragments in one block.
    if (isRecord(d.function_call)) toolCall({ function: d.function_call }, -1)
    const finish = value.finish_reason
    if (typeof finish === 'string' && finish !== '') {
      finishReason = finish
      closeBlock()
    }
  }

  function stop (): void {
    if (stopped || failed) return
    start(undefined)
    closeBlock()
    stopped = true
    out += sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: anthropicStopReason(finishReason, calledTools), stop_sequence: null },
      usage: usage === undefined ? { output_tokens: 0 } : anthropicUsage(usage)
    })
    out += MESSAGE_STOP
  }

  function fail (error: JsonRecord): void {
    if (stopped || failed) return
    failed = true
    const message = str(error.message) ?? 'The upstream reported an error'
    out += sse('error', { type: 'error', error: { type: streamErrorType(error), message } })
  }

  const reader = chatChunkReader({
    chunk: start,
    choice,
    usage: (raw) => { usage = readUsage(raw) },
    done: stop,
    error: fail,
    ended: () => stopped || failed
  })

  function flush (): Buffer {
    const bytes = out === '' ? EMPTY : Buffer.from(out)
    out = ''
    return bytes
  }

  return streamConverter(reader, { flush, usage: () => usage, finished: () => stopped, text: kept })
}
