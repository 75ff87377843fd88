import type { ConvertedResponse, RelayRequest, Usage } from '../core/adaptor.js'
import { isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'

/** Anthropic `stop_reason` to OpenAI `finish_reason`. */
const FINISH_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter'
}

/** The OpenAI finish reason of an Anthropic stop reason; unknown ones read as `stop`. */
export function finishReason (stopReason: string | undefined): string {
  return (stopReason === undefined ? undefined : FINISH_REASONS[stopReason]) ?? 'stop'
}

/** Token counts of an Anthropic `usage` object, as far as it reports them. */
export interface ClaudeTokens {
  input?: number
  cacheRead?: number
  cacheWrite?: number
  output?: number
}

/** Reads the counts of an Anthropic `usage` object; absent fields stay undefined. */
export function readClaudeTokens (value: unknown, into: ClaudeTokens = {}): ClaudeTokens {
  if (!isRecord(value)) return into
  const input = num(value.input_tokens)
  const cacheRead = num(value.cache_read_input_tokens)
  const cacheWrite = num(value.cache_creation_input_tokens)
  const output = num(value.output_tokens)
  if (input !== undefined) into.input = input
  if (cacheRead !== undefined) into.cacheRead = cacheRead
  if (cacheWrite !== undefined) into.cacheWrite = cacheWrite
  if (output !== undefined) into.output = output
  return into
}

/**
 * The gateway's Usage of Anthropic counts. Anthropic's `input_tokens` leaves out the tokens read
 * from and written to the prompt cache; all three are prompt tokens here, with the cache reads
 * as `cachedTokens` and the writes as `cacheWriteTokens`.
 */
export function claudeUsage (tokens: ClaudeTokens): Usage | undefined {
  if (tokens.input === undefined && tokens.output === undefined) return undefined
  const cacheRead = tokens.cacheRead ?? 0
  const cacheWrite = tokens.cacheWrite ?? 0
  const usage: Usage = { promptTokens: (tokens.input ?? 0) + cacheRead + cacheWrite, completionTokens: tokens.output ?? 0 }
  if (cacheRead > 0) usage.cachedTokens = cacheRead
  if (cacheWrite > 0) usage.cacheWriteTokens = cacheWrite
  return usage
}

/** OpenAI's `usage` object for `usage`. */
export function openAIUsage (usage: Usage): JsonRecord {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 }
  }
}

/** Text, thinking and tool input of an Anthropic answer's content, for counting. */
function contentText (content: readonly unknown[]): string {
  let text = ''
  for (const block of content) {
    if (!isRecord(block)) continue
    text += str(block.text) ?? str(block.thinking) ?? ''
    if (block.type === 'tool_use') text += JSON.stringify(block.input ?? {})
  }
  return text
}

/**
 * A non-streamed Anthropic answer as an OpenAI chat completion: text blocks joined as the
 * content, thinking as `reasoning_content`, tool_use blocks as tool calls, the stop reason as the
 * finish reason, usage with the cache reads as cached prompt tokens. A body that is not an
 * Anthropic message is forwarded unchanged.
 */
export function convertClaudeChat (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const json = parseJson(body.toString('utf8'))
  if (!isRecord(json) || !Array.isArray(json.content)) return { status, contentType: contentType || 'application/json', body }
  let text = ''
  let reasoning = ''
  const toolCalls: JsonRecord[] = []
  for (const block of list(json.content)) {
    if (!isRecord(block)) continue
    if (block.type === 'text') text += str(block.text) ?? ''
    else if (block.type === 'thinking') reasoning += str(block.thinking) ?? ''
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: str(block.id) ?? '',
        type: 'function',
        function: { name: str(block.name) ?? '', arguments: JSON.stringify(block.input ?? {}) }
      })
    }
  }
  const message: Record<string, unknown> = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text }
  if (reasoning !== '') message.reasoning_content = reasoning
  if (toolCalls.length > 0) message.tool_calls = toolCalls
  const usage = claudeUsage(readClaudeTokens(json.usage))
  const answer: Record<string, unknown> = {
    id: str(json.id) ?? '',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: str(json.model) ?? req.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(str(json.stop_reason)) }]
  }
  if (usage !== undefined) answer.usage = openAIUsage(usage)
  const converted: ConvertedResponse = { status, contentType: 'application/json', body: JSON.stringify(answer), text: contentText(json.content) }
  if (usage !== undefined) converted.usage = usage
  return converted
}

/** An Anthropic client's answer, forwarded unchanged; usage and text read on the way. */
export function convertClaudePassThrough (_req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const converted: ConvertedResponse = { status, contentType: contentType || 'application/json', body }
  const json = parseJson(body.toString('utf8'))
  if (!isRecord(json)) return converted
  const usage = claudeUsage(readClaudeTokens(json.usage))
  if (usage !== undefined) converted.usage = usage
  converted.text = contentText(list(json.content))
  return converted
}
