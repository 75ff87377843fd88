import { randomBytes } from 'node:crypto'
import { contentText } from '../anthropic/response.js'
import { at, isRecord, list, num, parseJson, str } from '../../core/json.js'
import { readUsage } from '../../openai-compatible/usage.js'

/** Gemini's `usageMetadata` (the fields an OpenAI usage can fill). */
export interface GeminiUsageMetadata {
  promptTokenCount: number
  candidatesTokenCount: number
  totalTokenCount: number
  /** Reasoning tokens; present only when the upstream reported some. */
  thoughtsTokenCount?: number
  /** Prompt tokens served from cache (a part of promptTokenCount); present only when some. */
  cachedContentTokenCount?: number
}

/**
 * An OpenAI `usage` object in Gemini's names: promptTokenCount = prompt_tokens (cached
 * included, as Google counts it), candidatesTokenCount = completion_tokens minus reasoning
 * tokens, thoughtsTokenCount = `completion_tokens_details.reasoning_tokens` (when above 0),
 * totalTokenCount = total_tokens (or the sum), cachedContentTokenCount = cached prompt tokens
 * (when above 0). Undefined when the value carries no token counts.
 */
export function geminiUsageMetadata (usage: unknown): GeminiUsageMetadata | undefined {
  const read = readUsage(usage)
  if (read === undefined) return undefined
  const reasoning = Math.min(num(at(usage, 'completion_tokens_details', 'reasoning_tokens')) ?? 0, read.completionTokens)
  const metadata: GeminiUsageMetadata = {
    promptTokenCount: read.promptTokens,
    candidatesTokenCount: read.completionTokens - reasoning,
    totalTokenCount: (isRecord(usage) ? num(usage.total_tokens) : undefined) ?? read.promptTokens + read.completionTokens
  }
  if (reasoning > 0) metadata.thoughtsTokenCount = reasoning
  if ((read.cachedTokens ?? 0) > 0) metadata.cachedContentTokenCount = read.cachedTokens
  return metadata
}

/**
 * Gemini's `finishReason` for an OpenAI `finish_reason`: length → MAX_TOKENS, content_filter →
 * SAFETY; stop, tool_calls, function_call and anything else → STOP (Gemini ends a turn that
 * calls functions with STOP).
 */
export function geminiFinishReason (finishReason: unknown): string {
  switch (finishReason) {
    case 'length': return 'MAX_TOKENS'
    case 'content_filter': return 'SAFETY'
    default: return 'STOP'
  }
}

/** The upstream's completion id, or a random one (Gemini's responseId is an opaque string). */
export function responseId (chatId: unknown): string {
  const id = str(chatId)
  return id === undefined || id === '' ? randomBytes(12).toString('base64url') : id
}

/** Tool arguments as an object: invalid JSON, or JSON that is not an object, gives {}. */
function functionArgs (args: unknown): Record<string, unknown> {
  if (isRecord(args)) return { ...args }
  const parsed = typeof args === 'string' ? parseJson(args) : undefined
  return isRecord(parsed) ? { ...parsed } : {}
}

/** A functionCall part (the upstream's call id kept as `id`). */
export function functionCallPart (id: string | undefined, name: string, args: unknown): Record<string, unknown> {
  const call: Record<string, unknown> = { name, args: functionArgs(args) }
  if (id !== undefined && id !== '') call.id = id
  return { functionCall: call }
}

/**
 * Converts an OpenAI chat completion to a Gemini GenerateContentResponse:
 * `{candidates, usageMetadata, modelVersion: model, responseId}`. One candidate per choice
 * (`index` kept), its `content: {role: 'model', parts}` in order: a `{text, thought: true}`
 * part from `reasoning_content` (or `reasoning`), a `{text}` part (content and refusal; none
 * when empty), one `{functionCall: {id, name, args}}` part per tool call or legacy
 * `function_call` (args parsed from the arguments; invalid JSON gives {}). `finishReason` by
 * geminiFinishReason; usageMetadata by geminiUsageMetadata (zeros when the upstream sent none).
 */
export function chatToGeminiResponse (chat: Readonly<Record<string, unknown>>, model: string): Record<string, unknown> {
  const candidates: Array<Record<string, unknown>> = []
  list(chat.choices).forEach((choice, position) => {
    if (!isRecord(choice)) return
    const message = isRecord(choice.message) ? choice.message : {}
    const parts: Array<Record<string, unknown>> = []
    const reasoning = str(message.reasoning_content) ?? str(message.reasoning) ?? ''
    if (reasoning !== '') parts.push({ text: reasoning, thought: true })
    const text = contentText(message.content) + (str(message.refusal) ?? '')
    if (text !== '') parts.push({ text })
    for (const call of list(message.tool_calls)) {
      if (!isRecord(call) || !isRecord(call.function)) continue
      parts.push(functionCallPart(str(call.id), str(call.function.name) ?? '', call.function.arguments))
    }
    if (isRecord(message.function_call)) parts.push(functionCallPart(undefined, str(message.function_call.name) ?? '', message.function_call.arguments))
    candidates.push({
      content: { role: 'model', parts },
      finishReason: geminiFinishReason(choice.finish_reason),
      index: num(choice.index) ?? position
    })
  })
  return {
    candidates,
    usageMetadata: geminiUsageMetadata(chat.usage) ?? { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 },
    modelVersion: model,
    responseId: responseId(chat.id)
  }
}
