import { randomBytes } from 'node:crypto'
import type { Usage } from '../../core/adaptor.js'
import { isRecord, list, parseJson, str } from '../../core/json.js'
import { readUsage } from '../../openai-compatible/usage.js'

/** Token counts in Anthropic's names (input excludes the cached part, as Anthropic counts it). */
interface AnthropicUsage {
  input_tokens: number
  output_tokens: number
  cache_read_input_tokens: number
  cache_creation_input_tokens: number
}

/** Usage in Anthropic's names; zeros when the upstream reported none. */
export function anthropicUsage (usage: Usage | undefined): AnthropicUsage {
  const cached = usage?.cachedTokens ?? 0
  return {
    input_tokens: Math.max(0, (usage?.promptTokens ?? 0) - cached),
    output_tokens: usage?.completionTokens ?? 0,
    cache_read_input_tokens: cached,
    // OpenAI-compatible upstreams cache implicitly and bill no cache writes.
    cache_creation_input_tokens: 0
  }
}

/**
 * Anthropic's `stop_reason` for an OpenAI `finish_reason`: stop → end_turn, length →
 * max_tokens, tool_calls / function_call → tool_use, content_filter → refusal. Upstreams that
 * answer `stop` (or nothing) after calling tools get tool_use, which is what the client acts on.
 */
export function anthropicStopReason (finishReason: unknown, calledTools: boolean): string {
  switch (finishReason) {
    case 'length': return 'max_tokens'
    case 'tool_calls':
    case 'function_call': return 'tool_use'
    case 'content_filter': return 'refusal'
    default: return calledTools ? 'tool_use' : 'end_turn'
  }
}

/** A random id with Anthropic's prefix style (`msg_`, `toolu_`). */
export function anthropicId (prefix: string): string {
  return prefix + randomBytes(12).toString('hex')
}

/** `msg_` plus the upstream's completion id (without `chatcmpl-`), or a random one. */
export function messageId (chatId: unknown): string {
  const id = str(chatId)
  if (id === undefined || id === '') return anthropicId('msg_')
  return 'msg_' + (id.startsWith('chatcmpl-') ? id.slice('chatcmpl-'.length) : id)
}

/** Text of a chat message's or delta's `content` (a string, or parts with `text`). */
export function contentText (content: unknown): string {
  if (typeof content === 'string') return content
  let text = ''
  for (const part of list(content)) if (isRecord(part)) text += str(part.text) ?? ''
  return text
}

/** Tool arguments as an object: invalid JSON, or JSON that is not an object, gives {}. */
function toolInput (args: unknown): Record<string, unknown> {
  if (isRecord(args)) return { ...args }
  const parsed = typeof args === 'string' ? parseJson(args) : undefined
  return isRecord(parsed) ? { ...parsed } : {}
}

/**
 * Converts an OpenAI chat completion to an Anthropic message:
 * `{id: 'msg_…', type: 'message', role: 'assistant', model, content, stop_reason,
 * stop_sequence: null, usage}`. Content, in order: a `thinking` block from `reasoning_content`
 * (or `reasoning`), a `text` block (content and refusal; none when empty), one `tool_use`
 * block per tool call (input parsed from the arguments; invalid JSON gives {}) or legacy
 * `function_call`. Only the first choice is read. Usage: input_tokens = prompt_tokens minus
 * cached, cache_read_input_tokens = the cached tokens, cache_creation_input_tokens = 0.
 */
export function chatToAnthropicResponse (chat: Readonly<Record<string, unknown>>, model: string): Record<string, unknown> {
  const choice = list(chat.choices).find(isRecord)
  const message = choice !== undefined && isRecord(choice.message) ? choice.message : {}
  const content: Array<Record<string, unknown>> = []

  const reasoning = str(message.reasoning_content) ?? str(message.reasoning) ?? ''
  if (reasoning !== '') content.push({ type: 'thinking', thinking: reasoning, signature: '' })
  const text = contentText(message.content) + (str(message.refusal) ?? '')
  if (text !== '') content.push({ type: 'text', text })
  for (const call of list(message.tool_calls)) {
    if (!isRecord(call) || !isRecord(call.function)) continue
    content.push({
      type: 'tool_use',
      id: str(call.id) || anthropicId('toolu_'),
      name: str(call.function.name) ?? '',
      input: toolInput(call.function.arguments)
    })
  }
  if (isRecord(message.function_call)) {
    content.push({
      type: 'tool_use',
      id: anthropicId('toolu_'),
      name: str(message.function_call.name) ?? '',
      input: toolInput(message.function_call.arguments)
    })
  }

  const calledTools = content.some((block) => block.type === 'tool_use')
  return {
    id: messageId(chat.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: anthropicStopReason(choice?.finish_reason, calledTools),
    stop_sequence: null,
    usage: anthropicUsage(readUsage(chat.usage))
  }
}
