import type { ConvertedResponse, RelayRequest, Usage } from '../core/adaptor.js'
import { at, contentText, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { chatCompletion, embeddingsAnswer, openAIUsageOf, type OpenAIToolCall } from '../core/openai-shapes.js'
import { classifyDashScopeFailure, dashscopeErrorStatus, readDashScopeError } from './errors.js'

/** Token counts of a DashScope `usage` object, as far as it reports them. */
export interface DashScopeTokens {
  input?: number
  output?: number
  cached?: number
  cacheWrite?: number
  reasoning?: number
}

/**
 * Reads a DashScope `usage`: `input_tokens` and `output_tokens` (the reasoning tokens are a part
 * of the output: `output_tokens_details.reasoning_tokens`), the prompt tokens read from the
 * context cache (`prompt_tokens_details.cached_tokens`) and written to an explicit cache
 * (`cache_creation_input_tokens`), both parts of the input. Absent fields keep what `into` had
 * (stream events repeat the running counts).
 */
export function readDashScopeTokens (value: unknown, into: DashScopeTokens = {}): DashScopeTokens {
  if (!isRecord(value)) return into
  const fields: Array<[keyof DashScopeTokens, unknown]> = [
    ['input', value.input_tokens],
    ['output', value.output_tokens],
    ['cached', at(value, 'prompt_tokens_details', 'cached_tokens')],
    ['cacheWrite', at(value, 'prompt_tokens_details', 'cache_creation_input_tokens')],
    ['reasoning', at(value, 'output_tokens_details', 'reasoning_tokens')]
  ]
  for (const [key, raw] of fields) {
    const count = num(raw)
    if (count !== undefined) into[key] = count
  }
  return into
}

/** The gateway's Usage of DashScope counts; undefined when neither input nor output was reported. */
export function dashscopeUsage (tokens: DashScopeTokens): Usage | undefined {
  if (tokens.input === undefined && tokens.output === undefined) return undefined
  const usage: Usage = { promptTokens: tokens.input ?? 0, completionTokens: tokens.output ?? 0 }
  if (tokens.cached !== undefined && tokens.cached > 0) usage.cachedTokens = Math.min(tokens.cached, usage.promptTokens)
  if (tokens.cacheWrite !== undefined && tokens.cacheWrite > 0) usage.cacheWriteTokens = Math.min(tokens.cacheWrite, usage.promptTokens)
  return usage
}

/** OpenAI's usage object of DashScope counts, with the reasoning tokens when there were any. */
export function dashscopeOpenAIUsage (tokens: DashScopeTokens): JsonRecord | undefined {
  const usage = dashscopeUsage(tokens)
  return usage === undefined ? undefined : openAIUsageOf(usage, tokens.reasoning ?? 0)
}

/**
 * The OpenAI finish reason of a DashScope one; undefined while generating (DashScope streams
 * write the string `"null"` there). `tool_calls` when the answer called tools and stopped normally.
 */
export function dashscopeFinishReason (reason: unknown, calledTools: boolean): string | undefined {
  const value = str(reason)
  if (value === undefined || value === '' || value === 'null') return undefined
  if (value === 'length' || value === 'tool_calls' || value === 'content_filter') return value
  return calledTools ? 'tool_calls' : 'stop'
}

/** The OpenAI tool calls of a DashScope message (already OpenAI-shaped; ids made when missing). */
function toolCallsOf (value: unknown): OpenAIToolCall[] {
  const calls: OpenAIToolCall[] = []
  for (const call of list(value)) {
    if (!isRecord(call) || !isRecord(call.function)) continue
    const args = call.function.arguments
    calls.push({
      id: str(call.id) || `call_${calls.length + 1}`,
      type: 'function',
      function: { name: str(call.function.name) ?? '', arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) }
    })
  }
  return calls
}

/** A DashScope error found in a 2xx answer, as the relay's failure. */
function failed (body: string): ConvertedResponse | undefined {
  const error = readDashScopeError(body)
  if (error === undefined) return undefined
  const status = dashscopeErrorStatus(error.code)
  return { status, contentType: 'application/json', body, failure: classifyDashScopeFailure(status, body) }
}

/**
 * A non-streamed DashScope generation (`result_format: 'message'`, or the older `output.text`)
 * as an OpenAI chat completion: the first choice's content (a string, or the `{text}` parts of a
 * multimodal answer), `reasoning_content`, tool calls, the finish reason and usage with cached,
 * cache-write and reasoning tokens. A body that is an error (`{code, message}`) is reported as a
 * failure; any other body that is not a DashScope answer is forwarded unchanged.
 */
export function convertDashScopeChat (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const text = body.toString('utf8')
  const json = parseJson(text)
  if (!isRecord(json) || !isRecord(json.output)) return failed(text) ?? { status, contentType: contentType || 'application/json', body }
  const choice = list(json.output.choices)[0]
  const message = isRecord(choice) ? choice.message : undefined
  const content = isRecord(message) ? contentText(message.content) : str(json.output.text) ?? ''
  const reasoning = isRecord(message) ? str(message.reasoning_content) ?? '' : ''
  const toolCalls = isRecord(message) ? toolCallsOf(message.tool_calls) : []
  const finishReason = dashscopeFinishReason(isRecord(choice) ? choice.finish_reason : json.output.finish_reason, toolCalls.length > 0) ?? 'stop'
  const tokens = readDashScopeTokens(json.usage)
  const openAIUsage = dashscopeOpenAIUsage(tokens)
  const answer = chatCompletion({
    id: `chatcmpl-${str(json.request_id) ?? ''}`,
    model: req.model,
    content,
    reasoning,
    toolCalls,
    finishReason,
    ...(openAIUsage === undefined ? {} : { usage: openAIUsage })
  })
  const converted: ConvertedResponse = {
    status,
    contentType: 'application/json',
    body: answer,
    text: content + reasoning + toolCalls.map((call) => call.function.arguments).join('')
  }
  const usage = dashscopeUsage(tokens)
  if (usage !== undefined) converted.usage = usage
  return converted
}

/**
 * A DashScope text-embedding answer (`{output: {embeddings: [{text_index, embedding}]}, usage:
 * {total_tokens}}`) as OpenAI's embeddings answer, in input order, as floats or base64 as the
 * client asked; the usage is all prompt.
 */
export function convertDashScopeEmbeddings (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const text = body.toString('utf8')
  const json = parseJson(text)
  const items = list(at(json, 'output', 'embeddings'))
  if (!isRecord(json) || items.length === 0) return failed(text) ?? { status, contentType: contentType || 'application/json', body }
  const vectors: number[][] = []
  for (const [i, item] of items.entries()) {
    if (!isRecord(item)) continue
    const index = num(item.text_index) ?? i
    vectors[index] = list(item.embedding).filter((value): value is number => typeof value === 'number')
  }
  const total = num(at(json, 'usage', 'total_tokens')) ?? num(at(json, 'usage', 'input_tokens'))
  const converted: ConvertedResponse = {
    status,
    contentType: 'application/json',
    body: embeddingsAnswer(Array.from(vectors, (vector) => vector ?? []), req.model, total, req.body?.encoding_format)
  }
  if (total !== undefined) converted.usage = { promptTokens: total, completionTokens: 0 }
  return converted
}
