import type { ConvertedResponse, RelayRequest, Usage } from '../core/adaptor.js'
import { at, isRecord, list, num, str, parseJson, type JsonRecord } from '../core/json.js'

/** Gemini `finishReason` to OpenAI `finish_reason` (tool calls are decided by the parts). */
const FINISH_REASONS: Readonly<Record<string, string>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  IMAGE_PROHIBITED_CONTENT: 'content_filter'
}

/**
 * The OpenAI finish reason of a Gemini finish reason: `tool_calls` when the candidate called a
 * function and stopped normally; unknown reasons (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL, ...) read as `stop`.
 */
export function geminiFinishReason (reason: string | undefined, calledTools: boolean): string {
  const mapped = (reason === undefined ? undefined : FINISH_REASONS[reason]) ?? 'stop'
  return mapped === 'stop' && calledTools ? 'tool_calls' : mapped
}

/** Token counts of a Gemini `usageMetadata`, as far as it reports them. */
export interface GeminiTokens {
  prompt?: number
  toolPrompt?: number
  candidates?: number
  thoughts?: number
  cached?: number
}

/** Reads a `usageMetadata` object; absent fields stay undefined (or keep what `into` had). */
export function readGeminiTokens (value: unknown, into: GeminiTokens = {}): GeminiTokens {
  if (!isRecord(value)) return into
  const fields: Array<[keyof GeminiTokens, unknown]> = [
    ['prompt', value.promptTokenCount],
    ['toolPrompt', value.toolUsePromptTokenCount],
    ['candidates', value.candidatesTokenCount],
    ['thoughts', value.thoughtsTokenCount],
    ['cached', value.cachedContentTokenCount]
  ]
  for (const [key, raw] of fields) {
    const count = num(raw)
    if (count !== undefined) into[key] = count
  }
  return into
}

/**
 * The gateway's Usage of Gemini counts: the prompt (with the tokens of tool-use prompts, billed
 * as input), the completion with the thinking tokens (billed as output), and the tokens read from
 * the context cache (a part of the prompt).
 */
export function geminiUsage (tokens: GeminiTokens): Usage | undefined {
  if (tokens.prompt === undefined && tokens.candidates === undefined) return undefined
  const usage: Usage = {
    promptTokens: (tokens.prompt ?? 0) + (tokens.toolPrompt ?? 0),
    completionTokens: (tokens.candidates ?? 0) + (tokens.thoughts ?? 0)
  }
  if ((tokens.cached ?? 0) > 0) usage.cachedTokens = tokens.cached
  return usage
}

/** OpenAI's `usage` object: with the thinking tokens as reasoning tokens when there were any. */
export function geminiOpenAIUsage (tokens: GeminiTokens): JsonRecord | undefined {
  const usage = geminiUsage(tokens)
  if (usage === undefined) return undefined
  const out: Record<string, unknown> = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 }
  }
  if ((tokens.thoughts ?? 0) > 0) out.completion_tokens_details = { reasoning_tokens: tokens.thoughts }
  return out
}

/** An OpenAI tool call of a Gemini functionCall part, its thought signature carried as Google's OpenAI API does. */
export function toolCallOf (part: JsonRecord, id: string): Record<string, unknown> | undefined {
  const call = part.functionCall
  if (!isRecord(call)) return undefined
  const out: Record<string, unknown> = {
    id: str(call.id) ?? id,
    type: 'function',
    function: { name: str(call.name) ?? '', arguments: JSON.stringify(call.args ?? {}) }
  }
  const signature = str(part.thoughtSignature)
  if (signature !== undefined && signature !== '') out.extra_content = { google: { thought_signature: signature } }
  return out
}

/** Text, thoughts and function arguments of a candidate's parts, for counting. */
export function partsText (parts: readonly unknown[]): string {
  let text = ''
  for (const part of parts) {
    if (!isRecord(part)) continue
    text += str(part.text) ?? ''
    if (isRecord(part.functionCall)) text += JSON.stringify(part.functionCall.args ?? {})
  }
  return text
}

/**
 * A non-streamed Gemini answer as an OpenAI chat completion: one choice per candidate, its text
 * parts joined as the content, thought parts as `reasoning_content`, functionCall parts as tool
 * calls (ids `call_1`, `call_2`, ... unless Gemini gave one; arguments as a JSON string), the
 * finish reason mapped, usage with thinking and cached tokens. A prompt blocked before any
 * candidate (promptFeedback.blockReason) is an empty answer finished by `content_filter`. A body
 * that is not a Gemini answer is forwarded unchanged.
 */
export function convertGeminiChat (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const json = parseJson(body.toString('utf8'))
  const blocked = str(at(json, 'promptFeedback', 'blockReason'))
  if (!isRecord(json) || (!Array.isArray(json.candidates) && blocked === undefined && !isRecord(json.usageMetadata))) {
    return { status, contentType: contentType || 'application/json', body }
  }
  let counted = ''
  let calls = 0
  const choices: JsonRecord[] = []
  for (const candidate of list(json.candidates)) {
    if (!isRecord(candidate)) continue
    const parts = list(at(candidate, 'content', 'parts'))
    let text = ''
    let reasoning = ''
    const toolCalls: JsonRecord[] = []
    for (const part of parts) {
      if (!isRecord(part)) continue
      const call = toolCallOf(part, `call_${calls + 1}`)
      if (call !== undefined) {
        calls++
        toolCalls.push(call)
      } else if (part.thought === true) reasoning += str(part.text) ?? ''
      else text += str(part.text) ?? ''
    }
    counted += partsText(parts)
    const message: Record<string, unknown> = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text }
    if (reasoning !== '') message.reasoning_content = reasoning
    if (toolCalls.length > 0) message.tool_calls = toolCalls
    const finish = geminiFinishReason(str(candidate.finishReason), toolCalls.length > 0)
    choices.push({ index: num(candidate.index) ?? choices.length, message, logprobs: null, finish_reason: finish })
  }
  if (choices.length === 0) {
    choices.push({ index: 0, message: { role: 'assistant', content: '' }, logprobs: null, finish_reason: blocked === undefined ? 'stop' : 'content_filter' })
  }
  const tokens = readGeminiTokens(json.usageMetadata)
  const answer: Record<string, unknown> = {
    id: `chatcmpl-${str(json.responseId) ?? ''}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: str(json.modelVersion) ?? req.model,
    choices
  }
  const openAIUsage = geminiOpenAIUsage(tokens)
  if (openAIUsage !== undefined) answer.usage = openAIUsage
  const converted: ConvertedResponse = { status, contentType: 'application/json', body: JSON.stringify(answer), text: counted }
  const usage = geminiUsage(tokens)
  if (usage !== undefined) converted.usage = usage
  return converted
}

/** A Gemini client's answer, forwarded unchanged; usage and text read on the way. */
export function convertGeminiPassThrough (_req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const converted: ConvertedResponse = { status, contentType: contentType || 'application/json', body }
  const json = parseJson(body.toString('utf8'))
  if (!isRecord(json)) return converted
  const usage = geminiUsage(readGeminiTokens(json.usageMetadata))
  if (usage !== undefined) converted.usage = usage
  let text = ''
  for (const candidate of list(json.candidates)) text += partsText(list(at(candidate, 'content', 'parts')))
  converted.text = text
  return converted
}
