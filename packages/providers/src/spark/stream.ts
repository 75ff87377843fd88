import type { RelayRequest, StreamConverter, Usage } from '../core/adaptor.js'
import { sseReader } from '../claude/index.js'
import { isRecord, list, num, parseJson, str } from '../core/json.js'
import { readUsage } from '../openai-compatible/usage.js'
import { chatChunkWriter, openAIUsageOf } from '../core/openai-shapes.js'
import { streamConverter } from '../core/stream-converter.js'
import { classifySparkFailure, readSparkError } from './errors.js'
import { sparkFinishReason, sparkToolCalls } from './response.js'

/**
 * Converts Spark's stream (`data:` events `{code, message, sid, choices: [{delta}]}`, usage in
 * the last one, then `data: [DONE]`) into well-formed OpenAI chat.completion.chunk events: the
 * role, content, `reasoning_content` (X1) and tool call deltas, then, on `[DONE]`, the finish
 * reason (Spark's, else `stop` or `tool_calls`), a usage chunk and `data: [DONE]`.
 *
 * An event whose `code` is not 0 is an error: after content it goes to the client as an OpenAI
 * error chunk, before any content only when it is the client's (refused content, bad
 * parameters), so that the relay retries the others on another channel; a `[DONE]` after an
 * error does not make the stream finished. Keeps only the usage and the text not taken.
 */
export function createSparkChatStream (req: RelayRequest): StreamConverter {
  const out = chatChunkWriter(req.model)
  let usage: Usage | undefined
  let reason: unknown
  let failed = false

  function event (data: string): void {
    if (data.trim() === '[DONE]') {
      if (!failed) out.finish(sparkFinishReason(reason, out.toolCalls() > 0), usage === undefined ? undefined : openAIUsageOf(usage))
      return
    }
    const json = parseJson(data)
    if (!isRecord(json)) return
    const error = readSparkError(json)
    if (error !== undefined) {
      failed = true
      const failure = classifySparkFailure(200, data)
      if (out.started() || failure.action === 'client') out.error(failure.message, failure.code ?? 'upstream_error')
      return
    }
    usage = readUsage(json.usage) ?? usage
    if (out.finished() || failed) return
    out.head(`chatcmpl-${str(json.sid) ?? str(json.id) ?? ''}`, req.model)
    const choice = list(json.choices)[0]
    if (!isRecord(choice)) return
    if (str(choice.finish_reason) !== undefined) reason = choice.finish_reason
    const delta = isRecord(choice.delta) ? choice.delta : {}
    out.reasoning(str(delta.reasoning_content) ?? '')
    out.content(str(delta.content) ?? '')
    for (const [i, call] of sparkToolCalls(delta.tool_calls).entries()) {
      if (!isRecord(call)) continue
      const fn = isRecord(call.function) ? call.function : {}
      const args = fn.arguments
      out.toolCall(String(num(call.index) ?? str(call.id) ?? i), {
        id: str(call.id),
        name: str(fn.name),
        arguments: typeof args === 'string' ? args : args === undefined ? undefined : JSON.stringify(args)
      })
    }
  }

  const reader = sseReader((sse) => {
    const data = sse.data.toString('utf8')
    // Events run together without their blank lines arrive as one: read them line by line.
    if (parseJson(data) !== undefined || !data.includes('\n')) event(data)
    else for (const line of data.split('\n')) event(line)
  })
  return streamConverter(reader, { flush: out.flush, usage: () => (out.finished() ? usage : undefined), finished: out.finished, text: out.text })
}
