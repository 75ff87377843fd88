import type { ChannelConfig, ConvertedResponse, RelayRequest, Usage } from '../core/adaptor.js'
import { at, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { chatCompletion, float32Base64, openAIUsageOf, type OpenAIToolCall } from '../core/openai-shapes.js'
import { baiduError, baiduFailure } from './errors.js'

/** ERNIE's `usage` as Usage (ERNIE reports no cached tokens); undefined without counts. */
export function ernieUsage (value: unknown): Usage | undefined {
  if (!isRecord(value)) return undefined
  const prompt = num(value.prompt_tokens)
  const completion = num(value.completion_tokens)
  if (prompt === undefined && completion === undefined) return undefined
  return { promptTokens: prompt ?? 0, completionTokens: completion ?? 0 }
}

/**
 * OpenAI's finish_reason of an ERNIE answer: `function_call` (or a function call) is tool_calls,
 * `length` stays, `content_filter` (or `need_clear_history`: the prompt was refused) is
 * content_filter, `normal` and `stop` are stop.
 */
export function ernieFinishReason (json: JsonRecord, called: boolean): string {
  const reason = str(json.finish_reason)
  if (called || reason === 'function_call') return 'tool_calls'
  if (reason === 'length') return 'length'
  if (reason === 'content_filter' || json.need_clear_history === true) return 'content_filter'
  return 'stop'
}

/** ERNIE's `function_call` as an OpenAI tool call with id `call_1`. */
export function ernieToolCall (value: unknown): OpenAIToolCall | undefined {
  if (!isRecord(value)) return undefined
  const name = str(value.name)
  if (name === undefined || name === '') return undefined
  const args = value.arguments
  return { id: 'call_1', type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) } }
}

/** A 2xx answer whose body is Baidu's `{error_code, error_msg}`: a failure for the relay (see ConvertedResponse.failure). */
function failed (channel: ChannelConfig, contentType: string, body: Buffer, json: unknown): ConvertedResponse | undefined {
  const error = baiduError(json)
  if (error === undefined) return undefined
  const { status, failure } = baiduFailure(error, channel)
  return { status, contentType: contentType || 'application/json', body, failure }
}

/**
 * A non-streamed ERNIE answer (`{id, result, finish_reason, usage, function_call, ...}`) as an
 * OpenAI chat completion; Baidu's `{error_code, error_msg}` (sent with HTTP 200) becomes a
 * failure. A body that is neither is forwarded unchanged.
 */
export function convertErnieChat (channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const json = parseJson(body.toString('utf8'))
  const failure = failed(channel, contentType, body, json)
  if (failure !== undefined) return failure
  if (!isRecord(json) || (json.result === undefined && json.function_call === undefined)) {
    return { status, contentType: contentType || 'application/json', body }
  }
  const text = str(json.result) ?? ''
  const call = ernieToolCall(json.function_call)
  const usage = ernieUsage(json.usage)
  const answer = chatCompletion({
    id: str(json.id) ?? 'chatcmpl-',
    model: req.model,
    ...(num(json.created) === undefined ? {} : { created: num(json.created) }),
    content: text,
    ...(call === undefined ? {} : { toolCalls: [call] }),
    finishReason: ernieFinishReason(json, call !== undefined),
    ...(usage === undefined ? {} : { usage: openAIUsageOf(usage) })
  })
  const counted = text + (call?.function.arguments ?? '')
  const converted: ConvertedResponse = { status, contentType: 'application/json', body: answer, text: counted }
  if (usage !== undefined) converted.usage = usage
  return converted
}

/**
 * Baidu's embeddings answer (`{data: [{embedding, index}], usage: {prompt_tokens, total_tokens}}`)
 * as OpenAI's list, vectors as base64 when the client asked `encoding_format: 'base64'` (as the
 * OpenAI SDKs do by default); Baidu's error body becomes a failure.
 */
export function convertBaiduEmbeddings (channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const json = parseJson(body.toString('utf8'))
  const failure = failed(channel, contentType, body, json)
  if (failure !== undefined) return failure
  if (!isRecord(json) || !Array.isArray(json.data)) return { status, contentType: contentType || 'application/json', body }
  const base64 = req.body?.encoding_format === 'base64'
  const data = json.data.filter(isRecord).map((item, i) => {
    const vector = list(item.embedding)
    return { object: 'embedding', index: num(item.index) ?? i, embedding: base64 ? float32Base64(vector) : vector }
  })
  const prompt = num(at(json.usage, 'prompt_tokens')) ?? num(at(json.usage, 'total_tokens'))
  const answer: Record<string, unknown> = { object: 'list', data, model: req.model }
  const converted: ConvertedResponse = { status, contentType: 'application/json', body: '' }
  if (prompt !== undefined) {
    answer.usage = { prompt_tokens: prompt, total_tokens: prompt }
    converted.usage = { promptTokens: prompt, completionTokens: 0 }
  }
  converted.body = JSON.stringify(answer)
  return converted
}
