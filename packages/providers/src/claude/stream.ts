import type { RelayRequest, StreamConverter } from '../core/adaptor.js'
import { at, isRecord, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { claudeUsage, finishReason, openAIUsage, readClaudeTokens, type ClaudeTokens } from './response.js'
import { sseReader, type SseEvent } from './sse.js'
import { templatedJson, type TemplateSpec } from '../core/templated-json.js'
import { outbox, streamConverter, type KeptText } from '../core/stream-converter.js'
import { textKeeper } from '../core/text-keeper.js'

/** A tool_use block being streamed. */
interface OpenTool {
  /** Its position among the answer's tool calls (OpenAI's `index`). */
  index: number
  /** Whether argument fragments came (else the input of content_block_start is sent whole). */
  fragments: boolean
  input: unknown
}

const DONE = 'data: [DONE]\n\n'

/** Anthropic stream events in, OpenAI chat chunks out, whatever carries the events. */
interface ClaudeEventConverter {
  /** One event's parsed data (`{type: 'message_start', ...}`); `name` is the SSE event name, if any. */
  event: (data: unknown, name?: string) => void
  /** The OpenAI bytes produced since the last call. */
  flush: () => Buffer
  usage: StreamConverter['usage']
  /** The text written (content, thinking, tool input) and not yet taken. */
  text: KeptText
  finished: StreamConverter['finished']
}

/**
 * Converts Anthropic Messages stream events into OpenAI chat.completion.chunk events, one by one:
 * a role chunk, then content, `reasoning_content` (thinking) and tool call deltas (id and name
 * first, then argument fragments, with OpenAI's tool call indexes), the finish reason, a usage
 * chunk (as OpenAI channels always give one, the gateway asking for it) and `data: [DONE]` on
 * `message_stop`. Nothing is sent before the first content, so an upstream that fails at once
 * (an `error` event after `message_start`) can still be retried on another channel; a later
 * `error` event goes to the client as an OpenAI error chunk. Keeps only the open tool calls and
 * the text not yet taken. Channels that carry the same events in another framing (AWS, Vertex)
 * feed them here.
 */
export function claudeChatEvents (req: RelayRequest): ClaudeEventConverter {
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…` without its closing brace. */
  let prefix: string | undefined
  let roleSent = false
  let finishSent = false
  const tools = new Map<number, OpenTool>()
  let toolCount = 0
  const tokens: ClaudeTokens = {}
  let usageFinal = false
  let done = false
  const text = textKeeper()
  const out = outbox()

  function setPrefix (id: string, model: string): void {
    const head = JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model })
    prefix = head.slice(0, -1)
  }

  /** One chunk of `delta` (an object, or its JSON already written). */
  function chunk (delta: JsonRecord | string, finish: string | null = null): void {
    if (prefix === undefined) setPrefix('', req.model)
    if (!roleSent) {
      roleSent = true
      out.push(`data: ${prefix},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`)
    }
    out.push(`data: ${prefix},"choices":[{"index":0,"delta":${typeof delta === 'string' ? delta : JSON.stringify(delta)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`)
  }

  function content (value: string): void {
    if (value === '') return
    // Most chunks are these: the delta written directly, the bytes JSON.stringify would give.
    chunk(`{"content":${JSON.stringify(value)}}`)
    text.keep(value)
  }

  function reasoning (value: string): void {
    if (value === '') return
    chunk(`{"reasoning_content":${JSON.stringify(value)}}`)
    text.keep(value)
  }

  function toolArguments (tool: OpenTool, fragment: string): void {
    if (fragment === '') return
    chunk({ tool_calls: [{ index: tool.index, function: { arguments: fragment } }] })
    text.keep(fragment)
  }

  function event (json: unknown, name?: string): void {
    if (done || !isRecord(json)) return
    const type = str(json.type) ?? name
    const index = num(json.index) ?? 0
    switch (type) {
      case 'message_start': {
        const message = isRecord(json.message) ? json.message : {}
        setPrefix(str(message.id) ?? '', str(message.model) ?? req.model)
        readClaudeTokens(message.usage, tokens)
        break
      }
      case 'content_block_start': {
        const block = isRecord(json.content_block) ? json.content_block : {}
        if (block.type === 'text') content(str(block.text) ?? '')
        else if (block.type === 'thinking') reasoning(str(block.thinking) ?? '')
        else if (block.type === 'tool_use') {
          const tool: OpenTool = { index: toolCount++, fragments: false, input: block.input }
          tools.set(index, tool)
          chunk({ tool_calls: [{ index: tool.index, id: str(block.id) ?? '', type: 'function', function: { name: str(block.name) ?? '', arguments: '' } }] })
        }
        break
      }
      case 'content_block_delta': {
        const delta = isRecord(json.delta) ? json.delta : {}
        if (delta.type === 'text_delta') content(str(delta.text) ?? '')
        else if (delta.type === 'thinking_delta') reasoning(str(delta.thinking) ?? '')
        else if (delta.type === 'input_json_delta') {
          const tool = tools.get(index)
          const fragment = str(delta.partial_json) ?? ''
          if (tool !== undefined && fragment !== '') {
            tool.fragments = true
            toolArguments(tool, fragment)
          }
        }
        break
      }
      case 'content_block_stop': {
        const tool = tools.get(index)
        tools.delete(index)
        // A server that sends the whole input at the start and no fragments.
        if (tool !== undefined && !tool.fragments && isRecord(tool.input) && Object.keys(tool.input).length > 0) {
          toolArguments(tool, JSON.stringify(tool.input))
        }
        break
      }
      case 'message_delta': {
        readClaudeTokens(json.usage, tokens)
        usageFinal = true
        const stop = str(at(json, 'delta', 'stop_reason'))
        if (stop !== undefined && !finishSent) {
          finishSent = true
          chunk({}, finishReason(stop))
        }
        break
      }
      case 'message_stop': {
        if (!finishSent) {
          finishSent = true
          chunk({}, 'stop')
        }
        const usage = usageFinal ? claudeUsage(tokens) : undefined
        if (usage !== undefined) out.push(`data: ${prefix},"choices":[],"usage":${JSON.stringify(openAIUsage(usage))}}\n\n`)
        out.push(DONE)
        done = true
        break
      }
      case 'error': {
        if (!roleSent) break
        const error = isRecord(json.error) ? json.error : {}
        const kind = str(error.type) ?? 'upstream_error'
        out.push(`data: ${JSON.stringify({ error: { message: str(error.message) ?? 'upstream error', type: kind, param: null, code: kind } })}\n\n`)
        break
      }
      default:
        // ping, and event types added later.
        break
    }
  }

  return {
    event,
    flush: out.flush,
    usage: () => (usageFinal ? claudeUsage(tokens) : undefined),
    text,
    finished: () => done
  }
}

/** A text delta's text: most of an answer's events, alike but for it. */
export const TEXT_DELTA: TemplateSpec = {
  path: ['delta', 'text'],
  learnable: (json) => json.type === 'content_block_delta' && at(json, 'delta', 'type') === 'text_delta'
}

/** An Anthropic server-sent-event stream converted for an OpenAI chat client (claudeChatEvents). */
export function createClaudeChatStream (req: RelayRequest): StreamConverter {
  const events = claudeChatEvents(req)
  const { parse } = templatedJson(TEXT_DELTA)
  const reader = sseReader((sse: SseEvent) => events.event(parse(sse.data.toString('utf8')), sse.name))
  return streamConverter(reader, events)
}

/** Text of a content_block_delta event's data (text, thinking or tool input). */
function deltaText (data: string): string {
  const delta = at(parseJson(data), 'delta')
  if (!isRecord(delta)) return ''
  return str(delta.text) ?? str(delta.thinking) ?? str(delta.partial_json) ?? ''
}

/**
 * Relays an Anthropic client's stream unchanged (complete events only: a cut last event is held
 * back), reading usage from `message_start` (input and cache tokens) and `message_delta` (output
 * tokens, and any input counts it repeats); finished on `message_stop`. Content deltas are kept
 * as received and parsed only when the gateway takes their text.
 */
export function createClaudePassThroughStream (): StreamConverter {
  const tokens: ClaudeTokens = {}
  let usageFinal = false
  let done = false
  const text = textKeeper()

  const reader = sseReader((event) => {
    if (done || event.name === 'ping') return
    const data = event.data.toString('utf8')
    if (event.name === 'content_block_delta') {
      text.keep(data)
      return
    }
    const json = parseJson(data)
    if (!isRecord(json)) return
    const type = str(json.type) ?? event.name
    if (type === 'content_block_delta') text.keep(data)
    else if (type === 'message_start') readClaudeTokens(at(json, 'message', 'usage'), tokens)
    else if (type === 'message_delta') {
      readClaudeTokens(json.usage, tokens)
      usageFinal = true
    } else if (type === 'message_stop') done = true
  })

  return {
    push: (bytes) => reader.push(bytes),
    end: () => reader.end(),
    usage: () => (usageFinal ? claudeUsage(tokens) : undefined),
    takeText: () => text.take(deltaText),
    untakenBytes: () => text.bytes(),
    finished: () => done
  }
}
