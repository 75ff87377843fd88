import type { ClassifiedFailure, ConvertedResponse, RelayRequest, Usage } from '../core/adaptor.js'
import { cleanUpstreamMessage } from '../core/failure-text.js'
import { at, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { openAIErrorBody } from '../openai-compatible/errors.js'
import { sseReader } from '../claude/index.js'

type Json = Record<string, unknown>

/** Token counts of a Responses `usage`, and the reasoning part of the output. */
export interface CodexTokens {
  usage: Usage
  /** Reasoning tokens (a part of completionTokens). */
  reasoning: number
}

/**
 * Reads a Responses `usage`: input_tokens (the cached ones included, as
 * `input_tokens_details.cached_tokens`) are the prompt, output_tokens (reasoning included, as
 * `output_tokens_details.reasoning_tokens`) the completion. Undefined when it holds no counts.
 */
export function codexTokens (value: unknown): CodexTokens | undefined {
  if (!isRecord(value)) return undefined
  const input = num(value.input_tokens)
  const output = num(value.output_tokens)
  if (input === undefined && output === undefined) return undefined
  const usage: Usage = { promptTokens: input ?? 0, completionTokens: output ?? 0 }
  const cached = num(at(value, 'input_tokens_details', 'cached_tokens'))
  if (cached !== undefined && cached > 0) usage.cachedTokens = Math.min(cached, usage.promptTokens)
  const reasoning = Math.min(num(at(value, 'output_tokens_details', 'reasoning_tokens')) ?? 0, usage.completionTokens)
  return { usage, reasoning }
}

/** OpenAI chat's `usage` object for `tokens` (reasoning details only when there was reasoning). */
export function chatUsage (tokens: CodexTokens): Json {
  const { usage, reasoning } = tokens
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
    ...(reasoning > 0 ? { completion_tokens_details: { reasoning_tokens: reasoning } } : {})
  }
}

/** The chat finish reason of a finished response with `tools` tool calls. */
export function finishReasonOf (response: unknown, tools: number): string {
  if (tools > 0) return 'tool_calls'
  if (at(response, 'status') !== 'incomplete') return 'stop'
  const reason = at(response, 'incomplete_details', 'reason')
  return reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'content_filter' : 'stop'
}

/** The parsed JSON data of every server-sent event of `body`. */
function sseEvents (body: Buffer): Array<{ name: string | undefined, data: unknown }> {
  const events: Array<{ name: string | undefined, data: unknown }> = []
  const reader = sseReader((sse) => {
    const json = parseJson(sse.data.toString('utf8'))
    if (json !== undefined) events.push({ name: sse.name, data: json })
  })
  reader.push(body)
  reader.end()
  return events
}

/** A stream's outcome, once read whole. */
interface Assembled {
  /** The final response object (completed, incomplete or failed), its `output` filled in. */
  response?: JsonRecord
  /** An `error` event's, or a failed response's, error. */
  error?: { code: string, message: string }
}

/** The output message item made of text deltas, for a stream that sent no items. */
const textItem = (text: string, index: number): Json => ({
  type: 'message', id: `msg_${index}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }]
})

/**
 * The final response of a Responses stream read whole. The Codex backend's `response.completed`
 * can carry an empty `output` (with `store: false` it keeps no response to echo back): the items
 * of `response.output_item.done`, in output order, take its place, or, when none came, the text
 * deltas as message items.
 */
function assembleResponse (events: ReadonlyArray<{ name: string | undefined, data: unknown }>): Assembled {
  const items = new Map<number, unknown>()
  const texts = new Map<number, string>()
  const assembled: Assembled = {}
  let final: JsonRecord | undefined
  for (const { name, data } of events) {
    if (!isRecord(data)) continue
    const type = str(data.type) ?? name
    const index = num(data.output_index) ?? 0
    if (type === 'response.output_item.done') items.set(num(data.output_index) ?? items.size, data.item)
    else if (type === 'response.output_text.delta') texts.set(index, (texts.get(index) ?? '') + (str(data.delta) ?? ''))
    else if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      if (isRecord(data.response)) final = data.response
    } else if (type === 'error') {
      assembled.error = { code: str(data.code) ?? str(at(data, 'error', 'code')) ?? 'upstream_error', message: str(data.message) ?? str(at(data, 'error', 'message')) ?? 'upstream error' }
    }
  }
  if (final === undefined) return assembled
  let output = list(final.output)
  if (output.length === 0) {
    output = [...items.entries()].sort((a, b) => a[0] - b[0]).map(([, item]) => item)
    if (output.length === 0) output = [...texts.entries()].sort((a, b) => a[0] - b[0]).map(([i, text]) => textItem(text, i))
  }
  assembled.response = { ...final, output }
  if (final.status === 'failed') {
    assembled.error = { code: str(at(final, 'error', 'code')) ?? 'upstream_error', message: str(at(final, 'error', 'message')) ?? 'the upstream failed to answer' }
  }
  return assembled
}

/** Text, reasoning and tool-call arguments of a response's output (for counting). */
function responseText (response: unknown): string {
  let text = ''
  for (const item of list(at(response, 'output'))) {
    if (!isRecord(item)) continue
    for (const part of list(item.content)) if (isRecord(part)) text += str(part.text) ?? str(part.refusal) ?? ''
    for (const part of list(item.summary)) if (isRecord(part)) text += str(part.text) ?? ''
    text += str(item.arguments) ?? ''
  }
  return text
}

/** A finished response as an OpenAI chat completion. */
function responseToChat (response: JsonRecord, req: RelayRequest): { chat: Json, tokens?: CodexTokens } {
  let content = ''
  let refusal = ''
  let reasoning = ''
  const toolCalls: Json[] = []
  for (const item of list(response.output)) {
    if (!isRecord(item)) continue
    if (item.type === 'message') {
      for (const part of list(item.content)) {
        if (!isRecord(part)) continue
        if (part.type === 'refusal') refusal += str(part.refusal) ?? ''
        else content += str(part.text) ?? ''
      }
    } else if (item.type === 'reasoning') {
      for (const part of list(item.summary)) if (isRecord(part)) reasoning += str(part.text) ?? ''
      for (const part of list(item.content)) if (isRecord(part)) reasoning += str(part.text) ?? ''
    } else if (item.type === 'function_call') {
      toolCalls.push({ id: str(item.call_id) ?? str(item.id) ?? '', type: 'function', function: { name: str(item.name) ?? '', arguments: str(item.arguments) ?? '' } })
    }
  }
  const message: Json = { role: 'assistant', content: content === '' && toolCalls.length > 0 ? null : content }
  if (refusal !== '') message.refusal = refusal
  if (reasoning !== '') message.reasoning_content = reasoning
  if (toolCalls.length > 0) message.tool_calls = toolCalls
  const tokens = codexTokens(response.usage)
  const chat: Json = {
    id: str(response.id) ?? '',
    object: 'chat.completion',
    created: num(response.created_at) ?? Math.floor(Date.now() / 1000),
    model: str(response.model) ?? req.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(response, toolCalls.length) }]
  }
  if (tokens !== undefined) chat.usage = chatUsage(tokens)
  return tokens === undefined ? { chat } : { chat, tokens }
}

/** How the relay handles a stream that failed with `code`, and the HTTP status it stands for. */
function failureOf (code: string, text: string): { status: number, failure: ClassifiedFailure } {
  const message = cleanUpstreamMessage(text)
  if (/usage_not_included|insufficient_quota|account_deactivated/i.test(code)) return { status: 403, failure: { action: 'disable', message, code } }
  if (/rate_limit|usage_limit|overloaded|slow_down/i.test(code)) return { status: 429, failure: { action: 'retry', message, code } }
  if (/context_length|context_window|invalid|too_large|not_supported|unsupported/i.test(code)) return { status: 400, failure: { action: 'client', message, code } }
  return { status: 502, failure: { action: 'retry', message, code } }
}

/**
 * The backend's answer to a request the gateway streamed for a non-streamed client, read whole
 * (server-sent events; a JSON response object from a mirror that does not stream is taken too):
 * the final response for Responses clients, an OpenAI chat completion for chat clients, with the
 * usage of `response.completed`. A stream that failed (`response.failed`, an `error` event) or
 * ended before its final event is reported as a failure (ConvertedResponse.failure) the relay
 * handles like a refusal: retried on another channel (server errors, rate and usage limits, a
 * cut stream), the channel disabled (a plan without Codex), or the client's error (a prompt too
 * long, an invalid request); the body is an OpenAI error of the matching status.
 */
export function convertCodexAnswer (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  let assembled: Assembled
  if (/json/i.test(contentType) && !/event-stream/i.test(contentType)) {
    const json = parseJson(body.toString('utf8'))
    assembled = isRecord(json) && Array.isArray(json.output) ? { response: json } : {}
  } else {
    assembled = assembleResponse(sseEvents(body))
  }
  const response = assembled.response
  if (response === undefined || assembled.error !== undefined) {
    const error = assembled.error ?? { code: 'upstream_stream_cut', message: 'the upstream stream ended before the response was complete' }
    // Handled as a refusal (another channel, or the client's error); nothing is billed.
    const { status: failed, failure } = failureOf(error.code, error.message)
    return { status: failed, contentType: 'application/json', body: openAIErrorBody(error.message, 'upstream_error', error.code), failure }
  }
  const tokens = codexTokens(response.usage)
  if (req.endpoint === 'responses') {
    const converted: ConvertedResponse = { status, contentType: 'application/json', body: JSON.stringify(response), text: responseText(response) }
    if (tokens !== undefined) converted.usage = tokens.usage
    return converted
  }
  const { chat } = responseToChat(response, req)
  const converted: ConvertedResponse = { status, contentType: 'application/json', body: JSON.stringify(chat), text: responseText(response) }
  if (tokens !== undefined) converted.usage = tokens.usage
  return converted
}
