import type { ConvertedResponse, RelayRequest, Usage } from '../core/adaptor.js'
import { openAIUsage } from '../claude/response.js'
import { at, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { requestPayload } from '../openai-compatible/api.js'
import { openAIErrorBody } from '../openai-compatible/errors.js'
import type { Payload } from '../openai-compatible/types.js'
import { readUsage } from '../openai-compatible/usage.js'
import { baseRespFailure } from './errors.js'
import { splitThink } from './think.js'

/**
 * MiniMax's chat request: the client's OpenAI body with `model` replaced (unknown fields, such
 * as `reasoning_split`, untouched). An assistant turn whose reasoning came back to the client as
 * `reasoning_content` gets it again as the `<think>` block MiniMax wrote, which its reasoning
 * models need to keep their chain of thought across turns.
 */
export function miniMaxChatBody (req: RelayRequest): Payload {
  return requestPayload(req, (body) => {
    if (!Array.isArray(body.messages)) return
    body.messages = body.messages.map((message: unknown) => {
      if (!isRecord(message) || message.role !== 'assistant') return message
      const reasoning = str(message.reasoning_content)
      const content = message.content ?? ''
      if (reasoning === undefined || reasoning === '' || typeof content !== 'string' || content.includes('<think>')) return message
      const restored: Record<string, unknown> = { ...message, content: `<think>\n${reasoning}\n</think>\n\n${content}` }
      delete restored.reasoning_content
      return restored
    })
  })
}

/** The text of `reasoning_details` (MiniMax's split reasoning, `[{type, text}]`). */
export function detailsText (details: unknown): string {
  let text = ''
  for (const detail of list(details)) if (isRecord(detail)) text += str(detail.text) ?? ''
  return text
}

/** OpenAI's usage object of `usage`, with the reasoning tokens MiniMax reported. */
export function miniMaxOpenAIUsage (usage: Usage, wire: unknown): JsonRecord {
  const out: Record<string, unknown> = { ...openAIUsage(usage) }
  const reasoning = num(at(wire, 'completion_tokens_details', 'reasoning_tokens'))
  if (reasoning !== undefined && reasoning > 0) out.completion_tokens_details = { reasoning_tokens: reasoning }
  return out
}

/**
 * A non-streamed MiniMax answer as an OpenAI chat completion: each choice's `<think>` block (or
 * `reasoning_details`) as `reasoning_content` and the rest as the content, tool calls as they
 * are, usage with cached and reasoning tokens. A `base_resp` reporting an error (MiniMax answers
 * HTTP 200) is a failure, classified by its code, with an OpenAI error body; a body that is not
 * a MiniMax answer is forwarded unchanged.
 */
export function convertMiniMaxChat (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const json = parseJson(body.toString('utf8'))
  if (!isRecord(json)) return { status, contentType: contentType || 'application/json', body }
  const reported = baseRespFailure(json.base_resp)
  if (reported !== undefined) {
    const { failure } = reported
    return { status: reported.status, contentType: 'application/json', body: openAIErrorBody(failure.message, 'upstream_error', failure.code ?? null), failure }
  }
  if (!Array.isArray(json.choices)) return { status, contentType: contentType || 'application/json', body }
  let counted = ''
  const choices = list(json.choices).filter(isRecord).map((choice, i) => {
    const message = isRecord(choice.message) ? choice.message : {}
    const raw = str(message.content) ?? ''
    const split = splitThink(raw)
    const reasoning = str(message.reasoning_content) ?? (detailsText(message.reasoning_details) || split.reasoning)
    const out: Record<string, unknown> = { role: 'assistant', content: split.content === '' && Array.isArray(message.tool_calls) ? null : split.content }
    if (reasoning !== '') out.reasoning_content = reasoning
    if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) out.tool_calls = message.tool_calls
    counted += split.content + reasoning
    for (const call of list(message.tool_calls)) counted += str(at(call, 'function', 'arguments')) ?? ''
    return { index: num(choice.index) ?? i, message: out, logprobs: null, finish_reason: str(choice.finish_reason) ?? 'stop' }
  })
  const usage = readUsage(json.usage)
  const answer: Record<string, unknown> = {
    id: str(json.id) ?? '',
    object: 'chat.completion',
    created: num(json.created) ?? Math.floor(Date.now() / 1000),
    model: str(json.model) ?? req.model,
    choices
  }
  if (usage !== undefined) answer.usage = miniMaxOpenAIUsage(usage, json.usage)
  const converted: ConvertedResponse = { status, contentType: 'application/json', body: JSON.stringify(answer), text: counted }
  if (usage !== undefined) converted.usage = usage
  return converted
}
