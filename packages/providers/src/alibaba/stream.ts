import type { RelayRequest, StreamConverter } from '../core/adaptor.js'
import { sseReader } from '../claude/index.js'
import { contentText, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { chatChunkWriter } from '../core/openai-shapes.js'
import { streamConverter } from '../core/stream-converter.js'
import { classifyDashScopeFailure } from './errors.js'
import { dashscopeFinishReason, dashscopeOpenAIUsage, dashscopeUsage, readDashScopeTokens, type DashScopeTokens } from './response.js'

/**
 * Converts DashScope's server-sent events (`id:`, `event:result`, `:HTTP_STATUS/200`, `data:` a
 * generation with `incremental_output`) into OpenAI chat.completion.chunk events, event by event:
 * the role, then content (a string, or the `{text}` parts of multimodal models),
 * `reasoning_content` and tool call deltas (told apart by their `index`), then, on the event
 * whose `finish_reason` is no longer `"null"`, the finish reason, a usage chunk (DashScope repeats
 * the running counts in every event: the last ones bill) and `data: [DONE]`.
 *
 * An `event:error` (`{code, message, request_id}`) after content goes to the client as an OpenAI
 * error chunk; before any content, only an error that is the client's (refused content, a bad
 * parameter) does, one that another channel may not have (throttling, an internal error) sends
 * nothing so that the relay retries. Keeps only the counts and the text not taken.
 */
export function createDashScopeChatStream (req: RelayRequest): StreamConverter {
  const out = chatChunkWriter(req.model)
  const tokens: DashScopeTokens = {}

  function error (data: string): void {
    const failure = classifyDashScopeFailure(400, data)
    if (out.started() || failure.action === 'client') out.error(failure.message, failure.code ?? 'upstream_error')
  }

  function result (json: JsonRecord): void {
    if (!isRecord(json.output)) return
    out.head(`chatcmpl-${str(json.request_id) ?? ''}`, req.model)
    readDashScopeTokens(json.usage, tokens)
    const choice = list(json.output.choices)[0]
    const message = isRecord(choice) ? choice.message : undefined
    if (isRecord(message)) {
      out.reasoning(str(message.reasoning_content) ?? '')
      out.content(contentText(message.content))
      for (const [i, call] of list(message.tool_calls).entries()) {
        if (!isRecord(call)) continue
        const fn = isRecord(call.function) ? call.function : {}
        out.toolCall(String(num(call.index) ?? i), { id: str(call.id), name: str(fn.name), arguments: str(fn.arguments) })
      }
    } else {
      out.content(str(json.output.text) ?? '')
    }
    const reason = dashscopeFinishReason(isRecord(choice) ? choice.finish_reason : json.output.finish_reason, out.toolCalls() > 0)
    if (reason !== undefined) out.finish(reason, dashscopeOpenAIUsage(tokens))
  }

  const reader = sseReader((event) => {
    const data = event.data.toString('utf8')
    const json = parseJson(data)
    if (event.name === 'error' || (isRecord(json) && json.output === undefined && str(json.code) !== undefined)) {
      error(data)
      return
    }
    // Running counts that arrive after the finish still bill.
    if (out.finished()) {
      if (isRecord(json)) readDashScopeTokens(json.usage, tokens)
      return
    }
    if (isRecord(json)) result(json)
  })

  return streamConverter(reader, { flush: out.flush, usage: () => (out.finished() ? dashscopeUsage(tokens) : undefined), finished: out.finished, text: out.text })
}
