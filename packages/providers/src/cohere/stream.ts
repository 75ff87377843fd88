import type { RelayRequest, StreamConverter, Usage } from '../core/adaptor.js'
import { openAIUsage } from '../claude/response.js'
import { sseReader } from '../claude/sse.js'
import { at, isRecord, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { outbox, streamConverter } from '../core/stream-converter.js'
import { textKeeper } from '../core/text-keeper.js'
import { cohereFinishReason, cohereUsage } from './response.js'

const DONE = 'data: [DONE]\n\n'

/**
 * Converts Cohere's v2 chat stream (server-sent events typed message-start, content-start,
 * content-delta, tool-plan-delta, tool-call-start/-delta/-end, citation-*, content-end,
 * message-end) into OpenAI chat.completion.chunk events: a role chunk, then content deltas
 * (the tool plan as content, thinking as `reasoning_content`), tool calls (id and name first,
 * then argument fragments, with OpenAI's indexes), the finish reason, a usage chunk from
 * message-end's billed units, and `data: [DONE]`. Nothing is sent before the first content, so
 * an upstream failing at once can be retried. Keeps only the tool call indexes and the text not
 * yet taken.
 */
export function createCohereChatStream (req: RelayRequest): StreamConverter {
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…` without its closing brace. */
  let prefix: string | undefined
  let roleSent = false
  /** OpenAI tool call index by Cohere's. */
  const tools = new Map<number, number>()
  let usage: Usage | undefined
  let done = false
  const text = textKeeper()
  const out = outbox()

  function setPrefix (id: string): void {
    prefix = JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: req.model }).slice(0, -1)
  }

  function chunk (delta: JsonRecord, finish: string | null = null): void {
    if (prefix === undefined) setPrefix('')
    if (!roleSent) {
      roleSent = true
      out.push(`data: ${prefix},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`)
    }
    out.push(`data: ${prefix},"choices":[{"index":0,"delta":${JSON.stringify(delta)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`)
  }

  function emit (key: 'content' | 'reasoning_content', value: string | undefined): void {
    if (value === undefined || value === '') return
    chunk({ [key]: value })
    text.keep(value)
  }

  function event (json: unknown, name: string | undefined): void {
    if (done || !isRecord(json)) return
    const message = at(json, 'delta', 'message')
    const index = num(json.index) ?? 0
    switch (str(json.type) ?? name) {
      case 'message-start':
        setPrefix(str(json.id) ?? '')
        break
      case 'content-start':
      case 'content-delta': {
        const content = at(message, 'content')
        emit('content', str(at(content, 'text')))
        emit('reasoning_content', str(at(content, 'thinking')))
        break
      }
      case 'tool-plan-delta':
        emit('content', str(at(message, 'tool_plan')))
        break
      case 'tool-call-start': {
        const call = at(message, 'tool_calls')
        const position = tools.size
        tools.set(index, position)
        const args = str(at(call, 'function', 'arguments')) ?? ''
        chunk({ tool_calls: [{ index: position, id: str(at(call, 'id')) ?? '', type: 'function', function: { name: str(at(call, 'function', 'name')) ?? '', arguments: args } }] })
        text.keep(args)
        break
      }
      case 'tool-call-delta': {
        const position = tools.get(index)
        const fragment = str(at(message, 'tool_calls', 'function', 'arguments')) ?? ''
        if (position === undefined || fragment === '') break
        chunk({ tool_calls: [{ index: position, function: { arguments: fragment } }] })
        text.keep(fragment)
        break
      }
      case 'message-end': {
        const delta = isRecord(json.delta) ? json.delta : {}
        chunk({}, cohereFinishReason(str(delta.finish_reason)))
        usage = cohereUsage(delta.usage)
        if (usage !== undefined) out.push(`data: ${prefix},"choices":[],"usage":${JSON.stringify(openAIUsage(usage))}}\n\n`)
        out.push(DONE)
        done = true
        break
      }
      default:
        // content-end, tool-call-end, citations, debug events.
        break
    }
  }

  const reader = sseReader((sse) => event(parseJson(sse.data.toString('utf8')), sse.name))
  return streamConverter(reader, { flush: out.flush, usage: () => usage, finished: () => done, text })
}
