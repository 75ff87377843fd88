import type { RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { contentText, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import type { ClaudeBlock, ClaudeMessage, ClaudeToolChoice } from './types.js'

/** `max_tokens` when the client sets none: Anthropic requires one, OpenAI clients often omit it. */
const DEFAULT_MAX_TOKENS = 4096

/** Anthropic's smallest thinking budget. */
const MIN_THINKING_BUDGET = 1024

/** Thinking budget (tokens) for each OpenAI `reasoning_effort`; other values ask for no thinking. */
const EFFORT_THINKING_BUDGET: Readonly<Record<string, number>> = { low: 1024, medium: 4096, high: 16384 }

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s

/** Blocks that may carry a cache breakpoint. */
type CacheableBlock = Extract<ClaudeBlock, { type: 'text' | 'image' | 'document' }>

/** `cache_control` of an OpenAI part or tool copied to the Anthropic block (prompt caching). */
function withCacheControl (block: CacheableBlock, source: JsonRecord): CacheableBlock {
  return isRecord(source.cache_control) ? { ...block, cache_control: source.cache_control } : block
}

/** An OpenAI `image_url` (a data: URL or an http(s) link) as an Anthropic image block. */
function imageBlock (part: JsonRecord): ClaudeBlock | undefined {
  const image = part.image_url
  const url = isRecord(image) ? str(image.url) : str(image)
  if (url === undefined || url === '') return undefined
  const data = DATA_URL.exec(url)
  if (data !== null) return withCacheControl({ type: 'image', source: { type: 'base64', media_type: data[1]!, data: data[2]! } }, part)
  if (/^https?:\/\//i.test(url)) return withCacheControl({ type: 'image', source: { type: 'url', url } }, part)
  return undefined
}

/** An OpenAI `file` part holding a PDF as a data: URL, as an Anthropic document block. */
function documentBlock (part: JsonRecord): ClaudeBlock | undefined {
  const file = isRecord(part.file) ? part.file : undefined
  const data = DATA_URL.exec(str(file?.file_data) ?? '')
  if (data === null || data[1] !== 'application/pdf') return undefined
  return withCacheControl({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data[2]! } }, part)
}

/** Text, image and PDF parts of an OpenAI message's content (a string or a list of parts). */
function contentBlocks (content: unknown): ClaudeBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }]
  const blocks: ClaudeBlock[] = []
  for (const part of list(content)) {
    if (typeof part === 'string') {
      if (part !== '') blocks.push({ type: 'text', text: part })
      continue
    }
    if (!isRecord(part)) continue
    const type = str(part.type)
    let block: ClaudeBlock | undefined
    if (type === 'text' || type === 'input_text') {
      const text = str(part.text) ?? ''
      if (text !== '') block = withCacheControl({ type: 'text', text }, part)
    } else if (type === 'image_url') {
      block = imageBlock(part)
    } else if (type === 'file') {
      block = documentBlock(part)
    }
    if (block !== undefined) blocks.push(block)
  }
  return blocks
}

/** An assistant's tool calls as tool_use blocks; arguments that are not a JSON object become {}. */
function toolUseBlocks (calls: unknown): ClaudeBlock[] {
  const blocks: ClaudeBlock[] = []
  for (const call of list(calls)) {
    if (!isRecord(call) || !isRecord(call.function)) continue
    const name = str(call.function.name)
    if (name === undefined) continue
    const input = parseJson(str(call.function.arguments) ?? '')
    blocks.push({ type: 'tool_use', id: str(call.id) ?? '', name, input: isRecord(input) ? input : {} })
  }
  return blocks
}

/** A role `tool` message as a tool_result block (text, or text and images when given as parts). */
function toolResultBlock (message: JsonRecord): ClaudeBlock {
  const content = message.content
  const blocks = typeof content === 'string' ? undefined : contentBlocks(content)
  const result = blocks !== undefined && blocks.some((block) => block.type === 'image') ? blocks : contentText(content)
  return { type: 'tool_result', tool_use_id: str(message.tool_call_id) ?? '', content: result }
}

/**
 * OpenAI messages as Anthropic's `system` and `messages`: system and developer messages join the
 * system prompt; tool results become user turns; consecutive turns of one role are merged, since
 * Anthropic requires user and assistant to alternate; empty turns are dropped.
 */
function convertMessages (messages: readonly unknown[]): { system: ClaudeBlock[], messages: ClaudeMessage[] } {
  const system: ClaudeBlock[] = []
  const out: ClaudeMessage[] = []
  for (const message of messages) {
    if (!isRecord(message)) continue
    const role = str(message.role)
    let converted: ClaudeMessage | undefined
    if (role === 'system' || role === 'developer') {
      for (const block of contentBlocks(message.content)) if (block.type === 'text') system.push(block)
      continue
    } else if (role === 'user') {
      converted = { role: 'user', content: contentBlocks(message.content) }
    } else if (role === 'assistant') {
      converted = { role: 'assistant', content: [...contentBlocks(message.content), ...toolUseBlocks(message.tool_calls)] }
    } else if (role === 'tool') {
      converted = { role: 'user', content: [toolResultBlock(message)] }
    }
    if (converted === undefined || converted.content.length === 0) continue
    const last = out.at(-1)
    if (last !== undefined && last.role === converted.role) last.content.push(...converted.content)
    else out.push(converted)
  }
  // Tool results must open their user turn (a tool message merged after a user message).
  for (const message of out) {
    if (message.role !== 'user') continue
    const results = message.content.filter((block) => block.type === 'tool_result')
    if (results.length > 0 && results.length < message.content.length) {
      message.content = [...results, ...message.content.filter((block) => block.type !== 'tool_result')]
    }
  }
  return { system, messages: out }
}

/** OpenAI function tools as Anthropic tools. */
function convertTools (tools: unknown): JsonRecord[] {
  const out: JsonRecord[] = []
  for (const tool of list(tools)) {
    if (!isRecord(tool) || !isRecord(tool.function)) continue
    const fn = tool.function
    const name = str(fn.name)
    if (name === undefined) continue
    const converted: Record<string, unknown> = { name }
    const description = str(fn.description)
    if (description !== undefined) converted.description = description
    converted.input_schema = isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} }
    if (isRecord(tool.cache_control)) converted.cache_control = tool.cache_control
    out.push(converted)
  }
  return out
}

/** OpenAI `tool_choice` (and `parallel_tool_calls: false`) as Anthropic's `tool_choice`. */
function convertToolChoice (choice: unknown, parallel: unknown): ClaudeToolChoice | undefined {
  let out: ClaudeToolChoice | undefined
  if (choice === 'auto') out = { type: 'auto' }
  else if (choice === 'none') out = { type: 'none' }
  else if (choice === 'required') out = { type: 'any' }
  else if (isRecord(choice) && isRecord(choice.function)) {
    const name = str(choice.function.name)
    if (name !== undefined) out = { type: 'tool', name }
  }
  if (parallel === false && out?.type !== 'none') out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true }
  return out
}

/** Anthropic's `thinking`: the client's own `thinking` field, else one derived from `reasoning_effort`. */
function thinkingOf (body: JsonRecord): JsonRecord | undefined {
  if (isRecord(body.thinking)) return body.thinking
  const effort = str(body.reasoning_effort)
  const budget = effort === undefined ? undefined : EFFORT_THINKING_BUDGET[effort]
  return budget === undefined ? undefined : { type: 'enabled', budget_tokens: budget }
}

/**
 * An OpenAI chat completion request as an Anthropic Messages request. Mapped: messages (system,
 * developer, user, assistant with tool calls, tool results; text, images as data: or http(s)
 * URLs, PDF files), tools and tool_choice, max_tokens / max_completion_tokens (default
 * DEFAULT_MAX_TOKENS), temperature (capped at Anthropic's maximum of 1), top_p (when no
 * temperature is sent), stop, user, stream, and thinking (`thinking`, or `reasoning_effort` low /
 * medium / high; not while the conversation ends in tool results, since the loop's signed thinking
 * blocks cannot come back through the OpenAI format). Anthropic's own `top_k` passes as is;
 * other OpenAI fields have no Anthropic equivalent and are not sent (the channel's parameter
 * override can add any field).
 */
export function claudeChatBody (req: RelayRequest): Record<string, unknown> {
  const body = req.body
  if (body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'a chat request needs a JSON body')
  const { system, messages } = convertMessages(list(body.messages))
  const out: Record<string, unknown> = { model: req.model, messages }
  if (system.length > 0) out.system = system
  const asked = num(body.max_completion_tokens) ?? num(body.max_tokens)
  let maxTokens = asked ?? DEFAULT_MAX_TOKENS

  // Within a tool loop Anthropic wants the loop's thinking blocks back, signed, which OpenAI
  // clients cannot return: the loop's remaining calls go without thinking.
  const inToolLoop = messages.at(-1)?.content.some((block) => block.type === 'tool_result') === true
  let thinking = inToolLoop ? undefined : thinkingOf(body)
  const budget = num(thinking?.budget_tokens)
  if (thinking !== undefined && budget !== undefined) {
    if (asked === undefined) {
      // The budget is a part of max_tokens: leave the default room for the answer itself.
      maxTokens = budget + DEFAULT_MAX_TOKENS
    } else if (budget >= asked && !isRecord(body.thinking)) {
      // A budget derived from reasoning_effort shrinks to fit the client's max_tokens, or goes.
      thinking = asked - 1 >= MIN_THINKING_BUDGET ? { ...thinking, budget_tokens: asked - 1 } : undefined
    }
  }
  out.max_tokens = maxTokens
  const thinkingOn = thinking !== undefined && thinking.type !== 'disabled'
  if (thinking !== undefined) out.thinking = thinking

  // With thinking on, Anthropic refuses temperature, top_k and a top_p below 0.95; its current
  // models refuse temperature and top_p together (OpenAI clients often send both): temperature wins.
  const temperature = thinkingOn ? undefined : num(body.temperature)
  if (temperature !== undefined) out.temperature = Math.min(temperature, 1)
  const topP = num(body.top_p)
  if (topP !== undefined && temperature === undefined && (!thinkingOn || topP >= 0.95)) out.top_p = topP
  const topK = num(body.top_k)
  if (topK !== undefined && !thinkingOn) out.top_k = topK

  const stop = typeof body.stop === 'string' ? [body.stop] : list(body.stop).filter((s): s is string => typeof s === 'string')
  const stopSequences = stop.filter((s) => s !== '')
  if (stopSequences.length > 0) out.stop_sequences = stopSequences

  const tools = convertTools(body.tools)
  if (tools.length > 0) {
    out.tools = tools
    const choice = convertToolChoice(body.tool_choice, body.parallel_tool_calls)
    if (choice !== undefined) out.tool_choice = choice
  }
  const user = str(body.user)
  if (user !== undefined && user !== '') out.metadata = { user_id: user }
  if (req.stream) out.stream = true
  return out
}

/** An Anthropic client's own body, sent as it wrote it with `model` replaced. */
export function claudePassThroughBody (req: RelayRequest): Record<string, unknown> {
  if (req.body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'a messages request needs a JSON body')
  return { ...req.body, model: req.model }
}
