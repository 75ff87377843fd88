import type { ConvertedResponse, RelayRequest } from '../core/adaptor.js'
import { isRecord, list, parseJson, str, type JsonRecord } from '../core/json.js'
import { readUsage } from '../openai-compatible/usage.js'
import { chatCompletion, openAIUsageOf, type OpenAIToolCall } from '../core/openai-shapes.js'
import { classifySparkFailure, readSparkError, sparkErrorStatus } from './errors.js'

/** Spark's tool calls: OpenAI's list, or one call object where a list is due. */
export function sparkToolCalls (value: unknown): readonly unknown[] {
  return isRecord(value) ? [value] : list(value)
}

/** An OpenAI tool call of one of Spark's (arguments as a JSON string; `call_<n>` when it has no id). */
function toolCallOf (call: unknown, n: number): OpenAIToolCall | undefined {
  if (!isRecord(call) || !isRecord(call.function)) return undefined
  const args = call.function.arguments
  const id = str(call.id)
  return {
    id: id === undefined || id === '' ? `call_${n}` : id,
    type: 'function',
    function: { name: str(call.function.name) ?? '', arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) }
  }
}

/** The OpenAI finish reason of a Spark choice (Spark often writes none: `stop`, or `tool_calls` after calls). */
export function sparkFinishReason (reason: unknown, calledTools: boolean): string {
  const value = str(reason)
  if (value === 'length' || value === 'content_filter' || value === 'tool_calls') return value
  return calledTools ? 'tool_calls' : 'stop'
}

/**
 * A non-streamed Spark answer (`{code: 0, message: 'Success', sid, choices: [{message}], usage}`)
 * as an OpenAI chat completion: content, `reasoning_content` (X1), tool calls, the finish reason
 * and usage. An answer whose `code` is not 0 is a failure, reported so whatever its HTTP status
 * (Spark answers most errors with 200). A body that is neither is forwarded unchanged.
 */
export function convertSparkChat (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const text = body.toString('utf8')
  const json = parseJson(text)
  const error = readSparkError(json)
  if (error !== undefined) {
    const failureStatus = sparkErrorStatus(error.code)
    return { status: failureStatus, contentType: 'application/json', body, failure: classifySparkFailure(failureStatus, text) }
  }
  if (!isRecord(json) || !Array.isArray(json.choices)) return { status, contentType: contentType || 'application/json', body }
  const choice = json.choices[0] as unknown
  const message: JsonRecord = isRecord(choice) && isRecord(choice.message) ? choice.message : {}
  const content = str(message.content) ?? ''
  const reasoning = str(message.reasoning_content) ?? ''
  const toolCalls = sparkToolCalls(message.tool_calls).map((call, i) => toolCallOf(call, i + 1)).filter((call) => call !== undefined)
  const usage = readUsage(json.usage)
  const answer = chatCompletion({
    id: `chatcmpl-${str(json.sid) ?? str(json.id) ?? ''}`,
    model: req.model,
    content,
    reasoning,
    toolCalls,
    finishReason: sparkFinishReason(isRecord(choice) ? choice.finish_reason : undefined, toolCalls.length > 0),
    ...(usage === undefined ? {} : { usage: openAIUsageOf(usage) })
  })
  const converted: ConvertedResponse = {
    status,
    contentType: 'application/json',
    body: answer,
    text: content + reasoning + toolCalls.map((call) => call.function.arguments).join('')
  }
  if (usage !== undefined) converted.usage = usage
  return converted
}
