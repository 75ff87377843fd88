import type { RelayRequest, StreamConverter, Usage } from '../core/adaptor.js'
import { sseReader } from '../claude/index.js'
import { isRecord, list, num, parseJson, str } from '../core/json.js'
import { chatChunkWriter, openAIUsageOf } from '../core/openai-shapes.js'
import { streamConverter } from '../core/stream-converter.js'
import { classifyTencentFailure, readTencentError } from './errors.js'
import { hunyuanFinishReason, hunyuanUsage, unwrap } from './response.js'

/**
 * Converts Hunyuan's stream (`data: {Choices: [{Delta: {Role, Content, ReasoningContent,
 * ToolCalls}, FinishReason}], Usage, Id, ...}`, running usage in every event, no end marker)
 * into OpenAI chat.completion.chunk events: the role, content, `reasoning_content` (T1) and tool
 * call deltas (Hunyuan repeats a call's Id in each of its pieces: they are merged by it), then,
 * on the event whose FinishReason is not empty, the finish reason (`sensitive` as
 * `content_filter`), a usage chunk and `data: [DONE]`.
 *
 * An error (`Response.Error`, or `ErrorMsg: {Code, Msg}` mid-stream) after content goes to the
 * client as an OpenAI error chunk; before any content only when it is the client's, so that the
 * relay retries the others. Keeps only the usage and the text not taken.
 */
export function createHunyuanChatStream (req: RelayRequest): StreamConverter {
  const out = chatChunkWriter(req.model)
  let usage: Usage | undefined

  function error (code: string, message: string, action: string): void {
    if (out.started() || action === 'client') out.error(message, code)
  }

  function event (data: string): void {
    const json = unwrap(parseJson(data))
    if (json === undefined) return
    const failure = readTencentError(json) === undefined ? undefined : classifyTencentFailure(200, data)
    if (failure !== undefined) {
      error(failure.code ?? 'upstream_error', failure.message, failure.action)
      return
    }
    if (isRecord(json.ErrorMsg) && num(json.ErrorMsg.Code) !== undefined && num(json.ErrorMsg.Code) !== 0) {
      // 4000 (internal) and 4001 (model timeout): passing failures.
      error(String(num(json.ErrorMsg.Code)), str(json.ErrorMsg.Msg) ?? 'upstream error', 'retry')
      return
    }
    usage = hunyuanUsage(json.Usage) ?? usage
    if (out.finished()) return
    out.head(`chatcmpl-${str(json.Id) ?? ''}`, req.model)
    const choice = list(json.Choices)[0]
    if (!isRecord(choice)) return
    const delta = isRecord(choice.Delta) ? choice.Delta : {}
    out.reasoning(str(delta.ReasoningContent) ?? '')
    out.content(str(delta.Content) ?? '')
    for (const [i, call] of list(delta.ToolCalls).entries()) {
      if (!isRecord(call)) continue
      const fn = isRecord(call.Function) ? call.Function : {}
      const id = str(call.Id)
      out.toolCall(id !== undefined && id !== '' ? id : String(num(call.Index) ?? i), { id, name: str(fn.Name), arguments: str(fn.Arguments) })
    }
    const reason = hunyuanFinishReason(choice.FinishReason, out.toolCalls() > 0)
    if (reason !== undefined) out.finish(reason, usage === undefined ? undefined : openAIUsageOf(usage))
  }

  const reader = sseReader((sse) => {
    const data = sse.data.toString('utf8')
    // Events run together without their blank lines arrive as one: read them line by line.
    if (parseJson(data) !== undefined || !data.includes('\n')) event(data)
    else for (const line of data.split('\n')) event(line)
  })
  return streamConverter(reader, { flush: out.flush, usage: () => (out.finished() ? usage : undefined), finished: out.finished, text: out.text })
}
