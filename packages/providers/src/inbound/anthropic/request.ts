import { isRecord, list, num, str, type JsonRecord } from '../../core/json.js'

/** One OpenAI chat message or content part, as built here (plain JSON). */
type Json = Record<string, unknown>

/**
 * Thinking budgets (`thinking.budget_tokens`) at which the OpenAI `reasoning_effort` steps up:
 * below `medium` tokens is `low`, from `medium` up to below `high` is `medium`, from `high` on
 * is `high`. Chosen around Claude Code's budgets (about 4,000 for "think", 10,000 for
 * "think hard", 32,000 for "ultrathink").
 */
const REASONING_BUDGET_THRESHOLDS = { medium: 4096, high: 16384 } as const

/** The OpenAI `reasoning_effort` for an Anthropic thinking budget in tokens. */
export function reasoningEffortForBudget (budgetTokens: number): 'low' | 'medium' | 'high' {
  if (budgetTokens >= REASONING_BUDGET_THRESHOLDS.high) return 'high'
  if (budgetTokens >= REASONING_BUDGET_THRESHOLDS.medium) return 'medium'
  return 'low'
}

/** Text of a string or of the `text` blocks of a block list, blocks joined by a newline. */
function plainText (value: unknown): string {
  if (typeof value === 'string') return value
  const texts: string[] = []
  for (const block of list(value)) {
    if (isRecord(block) && block.type === 'text') texts.push(str(block.text) ?? '')
  }
  return texts.join('\n')
}

/** An Anthropic image block as an OpenAI `image_url` part (base64 becomes a data: URL). */
function imagePart (block: JsonRecord): Json | undefined {
  const source = block.source
  if (!isRecord(source)) return undefined
  if (source.type === 'base64') {
    const data = str(source.data)
    if (data === undefined) return undefined
    return { type: 'image_url', image_url: { url: `data:${str(source.media_type) ?? 'image/png'};base64,${data}` } }
  }
  if (source.type === 'url') {
    const url = str(source.url)
    return url === undefined ? undefined : { type: 'image_url', image_url: { url } }
  }
  // `file` sources name an upload on Anthropic's Files API, which no OpenAI upstream can read.
  return undefined
}

/**
 * An Anthropic document block as an OpenAI part: plain-text and content sources as text, a
 * base64 PDF as a `file` part, a PDF URL as a text naming it (chat completions take no file URL).
 */
function documentPart (block: JsonRecord): Json | undefined {
  const source = block.source
  if (!isRecord(source)) return undefined
  const title = str(block.title)
  switch (source.type) {
    case 'text': {
      const text = str(source.data)
      return text === undefined ? undefined : { type: 'text', text }
    }
    case 'content':
      return { type: 'text', text: plainText(source.content) }
    case 'base64': {
      const data = str(source.data)
      if (data === undefined) return undefined
      const mediaType = str(source.media_type) ?? 'application/pdf'
      return { type: 'file', file: { filename: title ?? 'document.pdf', file_data: `data:${mediaType};base64,${data}` } }
    }
    case 'url': {
      const url = str(source.url)
      return url === undefined ? undefined : { type: 'text', text: `Document${title === undefined ? '' : ` "${title}"`}: ${url}` }
    }
    default:
      return undefined
  }
}

/** A user content block as an OpenAI part, or undefined for blocks chat has no place for. */
function userPart (block: JsonRecord): Json | undefined {
  switch (block.type) {
    case 'text': {
      const text = str(block.text)
      return text === undefined ? undefined : { type: 'text', text }
    }
    case 'image':
      return imagePart(block)
    case 'document':
      return documentPart(block)
    case 'search_result':
      return { type: 'text', text: [str(block.title), str(block.source), plainText(block.content)].filter((s) => s !== undefined && s !== '').join('\n') }
    default:
      return undefined
  }
}

/** User content: a string when it is all text (what every OpenAI upstream takes), else parts. */
function userContent (parts: Json[]): string | Json[] {
  if (parts.every((part) => part.type === 'text')) return parts.map((part) => part.text as string).join('\n')
  return parts
}

/**
 * A user message: each tool_result becomes a `tool` message (first, as OpenAI wants them right
 * after the assistant's tool calls), then the rest of the content as one user message. Images
 * inside a tool result go to that user message, as tool messages carry text only.
 */
function userMessages (content: unknown): Json[] {
  if (typeof content === 'string') return [{ role: 'user', content }]
  const messages: Json[] = []
  const parts: Json[] = []
  for (const block of list(content)) {
    if (!isRecord(block)) continue
    if (block.type !== 'tool_result') {
      const part = userPart(block)
      if (part !== undefined) parts.push(part)
      continue
    }
    const texts: string[] = []
    if (typeof block.content === 'string') texts.push(block.content)
    for (const inner of list(block.content)) {
      if (!isRecord(inner)) continue
      const part = userPart(inner)
      if (part === undefined) continue
      if (part.type === 'text') texts.push(part.text as string)
      else parts.push(part)
    }
    let text = texts.join('\n')
    if (block.is_error === true) text = text === '' ? 'Error' : `Error: ${text}`
    messages.push({ role: 'tool', tool_call_id: str(block.tool_use_id) ?? '', content: text })
  }
  if (parts.length > 0) messages.push({ role: 'user', content: userContent(parts) })
  return messages
}

/**
 * An assistant message: text blocks as the content, tool_use blocks as tool_calls. Thinking
 * blocks are dropped (their signatures mean nothing to another provider), and so are server
 * tool blocks (web search, code execution), which only Anthropic runs.
 */
function assistantMessage (content: unknown): Json | undefined {
  if (typeof content === 'string') return { role: 'assistant', content }
  const texts: string[] = []
  const calls: Json[] = []
  for (const block of list(content)) {
    if (!isRecord(block)) continue
    if (block.type === 'text') texts.push(str(block.text) ?? '')
    else if (block.type === 'tool_use') {
      calls.push({
        id: str(block.id) ?? '',
        type: 'function',
        function: { name: str(block.name) ?? '', arguments: JSON.stringify(isRecord(block.input) ? block.input : {}) }
      })
    }
  }
  if (texts.length === 0 && calls.length === 0) return undefined
  const message: Json = { role: 'assistant', content: texts.length === 0 ? null : texts.join('\n') }
  if (calls.length > 0) message.tool_calls = calls
  return message
}

/** Client tools (those with an `input_schema`) as OpenAI function tools; server tools are dropped. */
function functionTools (tools: unknown): Json[] {
  const out: Json[] = []
  for (const tool of list(tools)) {
    if (!isRecord(tool) || !isRecord(tool.input_schema)) continue
    const name = str(tool.name)
    if (name === undefined) continue
    const fn: Json = { name, parameters: tool.input_schema }
    const description = str(tool.description)
    if (description !== undefined) fn.description = description
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict
    out.push({ type: 'function', function: fn })
  }
  return out
}

/** `tool_choice` in OpenAI's words, or undefined when the client gave none (or an unknown one). */
function toolChoice (choice: JsonRecord): unknown {
  switch (choice.type) {
    case 'auto': return 'auto'
    case 'any': return 'required'
    case 'none': return 'none'
    case 'tool': {
      const name = str(choice.name)
      return name === undefined ? undefined : { type: 'function', function: { name } }
    }
    default: return undefined
  }
}

/** The effort asked for: `output_config.effort` first, else the thinking budget. */
function reasoningEffort (body: JsonRecord): 'low' | 'medium' | 'high' | undefined {
  const effort = isRecord(body.output_config) ? str(body.output_config.effort) : undefined
  if (effort === 'low' || effort === 'medium' || effort === 'high') return effort
  // Anthropic's levels above high have no common OpenAI equivalent.
  if (effort === 'xhigh' || effort === 'max') return 'high'
  const thinking = body.thinking
  if (isRecord(thinking) && thinking.type === 'enabled') {
    const budget = num(thinking.budget_tokens)
    if (budget !== undefined) return reasoningEffortForBudget(budget)
  }
  return undefined
}

/**
 * Converts an Anthropic Messages request (`POST /v1/messages`) to an OpenAI chat completions
 * request for an OpenAI-compatible channel.
 *
 * - `system` (string or text blocks) and any `role: 'system'` message become system messages.
 * - User text, images (base64 as a data: URL, or a URL) and documents become content parts
 *   (all-text content is sent as a string); each `tool_result` becomes a `tool` message placed
 *   before the rest of its user message, `is_error` written as an `Error: ` prefix.
 * - Assistant text becomes the content, `tool_use` blocks become `tool_calls` (arguments are
 *   `JSON.stringify(input)`); thinking blocks are dropped.
 * - `tools` with an `input_schema` become function tools (server tools are dropped);
 *   `tool_choice` auto/any/tool/none becomes auto/required/{function}/none, and
 *   `disable_parallel_tool_use` becomes `parallel_tool_calls: false`.
 * - `max_tokens`, `temperature`, `top_p` are copied, `stop_sequences` becomes `stop`,
 *   `metadata.user_id` becomes `user`, `stream: true` also asks for usage
 *   (`stream_options.include_usage`), `output_config.format` (JSON schema) becomes
 *   `response_format`.
 * - `output_config.effort` or `thinking: {type: 'enabled', budget_tokens}` becomes
 *   `reasoning_effort` (see REASONING_BUDGET_THRESHOLDS).
 *
 * `model` is kept; every other field (top_k, cache_control, service_tier, container, ...) is
 * dropped, as OpenAI upstreams reject fields they do not know. The input is not modified.
 */
export function anthropicToChatRequest (body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Json = {}
  if (body.model !== undefined) out.model = body.model

  const messages: Json[] = []
  const system = plainText(body.system)
  if (system !== '') messages.push({ role: 'system', content: system })
  for (const message of list(body.messages)) {
    if (!isRecord(message)) continue
    if (message.role === 'user') messages.push(...userMessages(message.content))
    else if (message.role === 'assistant') {
      const converted = assistantMessage(message.content)
      if (converted !== undefined) messages.push(converted)
    } else if (message.role === 'system') {
      messages.push({ role: 'system', content: plainText(message.content) })
    }
  }
  out.messages = messages

  const maxTokens = num(body.max_tokens)
  if (maxTokens !== undefined) out.max_tokens = maxTokens
  const stop = list(body.stop_sequences).filter((s): s is string => typeof s === 'string')
  if (stop.length > 0) out.stop = stop
  const temperature = num(body.temperature)
  if (temperature !== undefined) out.temperature = temperature
  const topP = num(body.top_p)
  if (topP !== undefined) out.top_p = topP
  const user = isRecord(body.metadata) ? str(body.metadata.user_id) : undefined
  if (user !== undefined && user !== '') out.user = user
  if (body.stream === true) {
    out.stream = true
    out.stream_options = { include_usage: true }
  }

  const tools = functionTools(body.tools)
  if (tools.length > 0) {
    out.tools = tools
    if (isRecord(body.tool_choice)) {
      const choice = toolChoice(body.tool_choice)
      if (choice !== undefined) out.tool_choice = choice
      if (body.tool_choice.disable_parallel_tool_use === true && choice !== 'none') out.parallel_tool_calls = false
    }
  }

  const effort = reasoningEffort(body)
  if (effort !== undefined) out.reasoning_effort = effort
  const format = isRecord(body.output_config) ? body.output_config.format : undefined
  if (isRecord(format) && format.type === 'json_schema' && isRecord(format.schema)) {
    out.response_format = { type: 'json_schema', json_schema: { name: 'response', schema: format.schema } }
  }
  return out
}
