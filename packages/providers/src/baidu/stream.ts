import type { ChannelConfig, RelayRequest, StreamConverter, Usage } from '../core/adaptor.js'
import { sseReader } from '../claude/index.js'
import { isRecord, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { errorChunk, openAIUsageOf } from '../core/openai-shapes.js'
import { outbox, streamConverter } from '../core/stream-converter.js'
import { textKeeper } from '../core/text-keeper.js'
import { baiduError, baiduFailure } from './errors.js'
import { ernieFinishReason, ernieToolCall, ernieUsage } from './response.js'

const DONE = 'data: [DONE]\n\n'

/**
 * Converts ERNIE's stream (server-sent events, one `data: {result, is_end, usage, ...}` object
 * each, `result` being the new text) into OpenAI chat.completion.chunk events: a role chunk
 * first, a content delta per event, a tool call for a `function_call`, then at `is_end` the
 * finish reason, a usage chunk (ERNIE's last usage) and `data: [DONE]`; finished only then.
 * Nothing is sent before the first event, so a stream failing at once can be retried; Baidu's
 * `{error_code, error_msg}` as an event drops a refused access token, and after content goes
 * to the client as an OpenAI error chunk. Keeps only the text not yet taken.
 */
export function createErnieStream (channel: ChannelConfig, req: RelayRequest): StreamConverter {
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…` without its closing brace. */
  let prefix: string | undefined
  let called = false
  let usage: Usage | undefined
  let done = false
  const text = textKeeper()
  const out = outbox()

  function chunk (delta: JsonRecord, finish: string | null = null): void {
    out.push(`data: ${prefix ?? ''},"choices":[{"index":0,"delta":${JSON.stringify(delta)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`)
  }

  function event (json: unknown): void {
    if (!isRecord(json) || done) return
    const error = baiduError(json)
    if (error !== undefined) {
      const { failure } = baiduFailure(error, channel)
      if (prefix !== undefined) out.push(errorChunk(failure.message, failure.code ?? null))
      return
    }
    if (prefix === undefined) {
      const head = JSON.stringify({ id: str(json.id) ?? 'chatcmpl-', object: 'chat.completion.chunk', created: num(json.created) ?? Math.floor(Date.now() / 1000), model: req.model })
      prefix = head.slice(0, -1)
      chunk({ role: 'assistant', content: '' })
    }
    const result = str(json.result) ?? ''
    if (result !== '') {
      chunk({ content: result })
      text.keep(result)
    }
    const call = ernieToolCall(json.function_call)
    if (call !== undefined && !called) {
      called = true
      chunk({ tool_calls: [{ index: 0, ...call }] })
      text.keep(call.function.arguments)
    }
    usage = ernieUsage(json.usage) ?? usage
    if (json.is_end === true) {
      chunk({}, ernieFinishReason(json, called))
      if (usage !== undefined) out.push(`data: ${prefix},"choices":[],"usage":${JSON.stringify(openAIUsageOf(usage))}}\n\n`)
      out.push(DONE)
      done = true
    }
  }

  const reader = sseReader((sse) => event(parseJson(sse.data.toString('utf8'))))
  return streamConverter(reader, { flush: out.flush, usage: () => (done ? usage : undefined), finished: () => done, text })
}
