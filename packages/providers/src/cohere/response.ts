import type { ConvertedResponse, RelayRequest, Usage } from '../core/adaptor.js'
import { openAIUsage } from '../claude/response.js'
import { at, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { chatCompletion, embeddingsAnswer, type OpenAIToolCall } from '../core/openai-shapes.js'
import { rerankDocuments } from './request.js'

/** Cohere `finish_reason` to OpenAI `finish_reason`. */
const FINISH_REASONS: Readonly<Record<string, string>> = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
  ERROR_TOXIC: 'content_filter'
}

/** The OpenAI finish reason of a Cohere one; ERROR, TIMEOUT and unknown ones read as `stop`. */
export function cohereFinishReason (reason: string | undefined): string {
  return (reason === undefined ? undefined : FINISH_REASONS[reason]) ?? 'stop'
}

/**
 * The gateway's Usage of a Cohere `usage` object: the billed units (what Cohere charges; the
 * `tokens` counts add the prompt template's), else the raw token counts; `cached_tokens` as the
 * cached part of the prompt.
 */
export function cohereUsage (value: unknown): Usage | undefined {
  if (!isRecord(value)) return undefined
  const input = num(at(value, 'billed_units', 'input_tokens')) ?? num(at(value, 'tokens', 'input_tokens'))
  const output = num(at(value, 'billed_units', 'output_tokens')) ?? num(at(value, 'tokens', 'output_tokens'))
  if (input === undefined && output === undefined) return undefined
  const usage: Usage = { promptTokens: input ?? 0, completionTokens: output ?? 0 }
  const cached = num(value.cached_tokens)
  if (cached !== undefined && cached > 0) usage.cachedTokens = Math.min(cached, usage.promptTokens)
  return usage
}

/** An OpenAI tool call of a Cohere one (the same fields). */
function openAIToolCall (call: JsonRecord): OpenAIToolCall {
  const fn = isRecord(call.function) ? call.function : {}
  return { id: str(call.id) ?? '', type: 'function', function: { name: str(fn.name) ?? '', arguments: str(fn.arguments) ?? '' } }
}

/**
 * A non-streamed Cohere v2 chat answer as an OpenAI chat completion: text parts joined as the
 * content (the tool plan when there is no text), thinking parts as `reasoning_content`, tool
 * calls, the finish reason, and usage from the billed units. A body that is not a Cohere answer
 * is forwarded unchanged.
 */
export function convertCohereChat (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const json = parseJson(body.toString('utf8'))
  if (!isRecord(json) || !isRecord(json.message)) return { status, contentType: contentType || 'application/json', body }
  let text = ''
  let reasoning = ''
  for (const part of list(json.message.content)) {
    if (!isRecord(part)) continue
    if (part.type === 'thinking') reasoning += str(part.thinking) ?? ''
    else text += str(part.text) ?? ''
  }
  const plan = str(json.message.tool_plan) ?? ''
  if (text === '') text = plan
  const toolCalls = list(json.message.tool_calls).filter(isRecord).map(openAIToolCall)
  const usage = cohereUsage(json.usage)
  const answer = chatCompletion({
    id: str(json.id) ?? '',
    model: req.model,
    content: text,
    reasoning,
    toolCalls,
    finishReason: cohereFinishReason(str(json.finish_reason)),
    ...(usage === undefined ? {} : { usage: openAIUsage(usage) })
  })
  let counted = text + reasoning
  for (const call of toolCalls) counted += call.function.arguments
  const converted: ConvertedResponse = { status, contentType: 'application/json', body: answer, text: counted }
  if (usage !== undefined) converted.usage = usage
  return converted
}

/**
 * Cohere's embed answer (`{embeddings: {float: [[…]]}, meta: {billed_units: {input_tokens}}}`) as
 * OpenAI's embeddings list, vectors as floats or base64 as the client asked, the billed input
 * tokens as prompt tokens. A body that is not one is forwarded unchanged.
 */
export function convertCohereEmbed (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const json = parseJson(body.toString('utf8'))
  const embeddings = isRecord(json) ? json.embeddings : undefined
  const vectors = isRecord(embeddings) ? embeddings.float : embeddings
  if (!isRecord(json) || !Array.isArray(vectors)) return { status, contentType: contentType || 'application/json', body }
  const input = num(at(json, 'meta', 'billed_units', 'input_tokens'))
  const usage: Usage | undefined = input === undefined ? undefined : { promptTokens: input, completionTokens: 0 }
  const converted: ConvertedResponse = { status, contentType: 'application/json', body: embeddingsAnswer(vectors, req.model, input, req.body?.encoding_format) }
  if (usage !== undefined) converted.usage = usage
  return converted
}

/**
 * Cohere's rerank answer (`{id, results: [{index, relevance_score}], meta: {billed_units: {search_units}}}`),
 * which is already the gateway's rerank shape: forwarded unchanged, or with each result's
 * `document: {text}` when the client asked for `return_documents`. Cohere bills rerank by
 * search unit (one query with up to 100 documents), so the usage is the search units as prompt
 * tokens: a ModelRatio of 1000 prices one unit at $0.002.
 */
export function convertCohereRerank (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const converted: ConvertedResponse = { status, contentType: contentType || 'application/json', body }
  const json = parseJson(body.toString('utf8'))
  if (!isRecord(json)) return converted
  const units = num(at(json, 'meta', 'billed_units', 'search_units'))
  if (units !== undefined) converted.usage = { promptTokens: units, completionTokens: 0 }
  if (req.body?.return_documents === true && Array.isArray(json.results)) {
    const documents = rerankDocuments(req)
    const results = list(json.results).map((result) => {
      const index = isRecord(result) ? num(result.index) : undefined
      const text = index === undefined ? undefined : documents[index]
      return isRecord(result) && text !== undefined ? { ...result, document: { text } } : result
    })
    converted.body = JSON.stringify({ ...json, results })
    converted.contentType = 'application/json'
  }
  return converted
}
