import type { ConvertedResponse, RelayRequest, Usage } from '../core/adaptor.js'
import { isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { chatCompletion, embeddingsAnswer, openAIUsageOf, type OpenAIToolCall } from '../core/openai-shapes.js'
import { classifyTencentFailure, readTencentError, tencentErrorMeaning } from './errors.js'

/** The answer inside Tencent's `{Response: {...}}` envelope (stream events come without it). */
export function unwrap (json: unknown): JsonRecord | undefined {
  if (!isRecord(json)) return undefined
  return isRecord(json.Response) ? json.Response : json
}

/** The gateway's Usage of a Hunyuan `Usage` (PromptTokens, CompletionTokens). */
export function hunyuanUsage (value: unknown): Usage | undefined {
  if (!isRecord(value)) return undefined
  const prompt = num(value.PromptTokens)
  const completion = num(value.CompletionTokens)
  if (prompt === undefined && completion === undefined) return undefined
  return { promptTokens: prompt ?? 0, completionTokens: completion ?? 0 }
}

/**
 * The OpenAI finish reason of a Hunyuan one; undefined while generating (an empty string).
 * `sensitive` (the output moderation stopped it) is `content_filter`.
 */
export function hunyuanFinishReason (reason: unknown, calledTools: boolean): string | undefined {
  const value = str(reason)
  if (value === undefined || value === '') return undefined
  if (value === 'sensitive') return 'content_filter'
  if (value === 'length' || value === 'tool_calls') return value
  return calledTools ? 'tool_calls' : 'stop'
}

function toolCallsOf (value: unknown): OpenAIToolCall[] {
  const calls: OpenAIToolCall[] = []
  for (const call of list(value)) {
    if (!isRecord(call) || !isRecord(call.Function)) continue
    const id = str(call.Id)
    calls.push({
      id: id === undefined || id === '' ? `call_${calls.length + 1}` : id,
      type: 'function',
      function: { name: str(call.Function.Name) ?? '', arguments: str(call.Function.Arguments) ?? '{}' }
    })
  }
  return calls
}

/** A Tencent Cloud error found in a 2xx answer, as the relay's failure (with the HTTP status it stands for). */
function tencentFailure (text: string): ConvertedResponse | undefined {
  const error = readTencentError(text)
  if (error === undefined) return undefined
  const { status } = tencentErrorMeaning(error.code)
  return { status, contentType: 'application/json', body: text, failure: classifyTencentFailure(status, text) }
}

/**
 * A Hunyuan ChatCompletions answer (`{Response: {Choices: [{Message, FinishReason}], Usage, Id}}`)
 * as an OpenAI chat completion: Content, ReasoningContent (T1) as `reasoning_content`,
 * ToolCalls, the finish reason and usage. Tencent reports errors with HTTP 200
 * (`Response.Error`): those are failures. A body that is neither is forwarded unchanged.
 */
export function convertHunyuanChat (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const text = body.toString('utf8')
  const failure = tencentFailure(text)
  if (failure !== undefined) return failure
  const answer = unwrap(parseJson(text))
  if (answer === undefined || !Array.isArray(answer.Choices)) return { status, contentType: contentType || 'application/json', body }
  const choice = answer.Choices[0] as unknown
  const message: JsonRecord = isRecord(choice) && isRecord(choice.Message) ? choice.Message : {}
  const content = str(message.Content) ?? ''
  const reasoning = str(message.ReasoningContent) ?? ''
  const toolCalls = toolCallsOf(message.ToolCalls)
  const usage = hunyuanUsage(answer.Usage)
  const converted: ConvertedResponse = {
    status,
    contentType: 'application/json',
    body: chatCompletion({
      id: `chatcmpl-${str(answer.Id) ?? str(answer.RequestId) ?? ''}`,
      model: req.model,
      content,
      reasoning,
      toolCalls,
      finishReason: hunyuanFinishReason(isRecord(choice) ? choice.FinishReason : undefined, toolCalls.length > 0) ?? 'stop',
      ...(usage === undefined ? {} : { usage: openAIUsageOf(usage) })
    }),
    text: content + reasoning + toolCalls.map((call) => call.function.arguments).join('')
  }
  if (usage !== undefined) converted.usage = usage
  return converted
}

/**
 * A GetEmbedding answer (`{Response: {Data: [{Embedding, Index}], Usage: {PromptTokens,
 * TotalTokens}}}`) as OpenAI's embeddings answer, floats or base64 as the client asked.
 */
export function convertHunyuanEmbeddings (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const text = body.toString('utf8')
  const failure = tencentFailure(text)
  if (failure !== undefined) return failure
  const answer = unwrap(parseJson(text))
  if (answer === undefined || !Array.isArray(answer.Data)) return { status, contentType: contentType || 'application/json', body }
  const vectors: number[][] = []
  for (const [i, item] of list(answer.Data).entries()) {
    if (!isRecord(item)) continue
    vectors[num(item.Index) ?? i] = list(item.Embedding).filter((value): value is number => typeof value === 'number')
  }
  const prompt = isRecord(answer.Usage) ? num(answer.Usage.PromptTokens) ?? num(answer.Usage.TotalTokens) : undefined
  const converted: ConvertedResponse = {
    status,
    contentType: 'application/json',
    body: embeddingsAnswer(Array.from(vectors, (vector) => vector ?? []), req.model, prompt, req.body?.encoding_format)
  }
  if (prompt !== undefined) converted.usage = { promptTokens: prompt, completionTokens: 0 }
  return converted
}
