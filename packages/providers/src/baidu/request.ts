import type { RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { contentText, isRecord, list, num, str, type JsonRecord } from '../core/json.js'

/** ERNIE's own request fields an OpenAI client may send; they go through as written. */
const ERNIE_FIELDS = [
  'penalty_score', 'disable_search', 'enable_citation', 'enable_trace', 'min_output_tokens',
  'enable_system_memory', 'system_memory_id', 'frequency_penalty', 'presence_penalty', 'user_id'
]

/** ERNIE's temperature range is (0, 1]. */
const MIN_TEMPERATURE = 0.01

interface ErnieMessage {
  role: 'user' | 'assistant' | 'function'
  content: string
  name?: string
  function_call?: { name: string, arguments: string }
}

/** The first tool call of an assistant message as ERNIE's `function_call` (ERNIE calls one function per turn). */
function functionCallOf (message: JsonRecord): ErnieMessage['function_call'] {
  for (const call of list(message.tool_calls)) {
    if (!isRecord(call) || !isRecord(call.function)) continue
    const name = str(call.function.name)
    if (name !== undefined) return { name, arguments: str(call.function.arguments) ?? '{}' }
  }
  if (isRecord(message.function_call)) {
    const name = str(message.function_call.name)
    if (name !== undefined) return { name, arguments: str(message.function_call.arguments) ?? '{}' }
  }
  return undefined
}

/**
 * OpenAI messages as ERNIE's `system` and `messages`: system and developer messages join the
 * system text; user and assistant turns keep their text (ERNIE's chat takes no images); an
 * assistant's tool call becomes its `function_call`; a tool result a `function` message named
 * after the call it answers. Consecutive turns of one role are joined (ERNIE wants user and
 * assistant turns to alternate).
 */
function convertMessages (messages: readonly unknown[]): { system: string, messages: ErnieMessage[] } {
  const system: string[] = []
  const out: ErnieMessage[] = []
  /** Function names by tool call id, as the assistant turns so far named them. */
  const names = new Map<string, string>()
  for (const message of messages) {
    if (!isRecord(message)) continue
    const role = str(message.role)
    const text = contentText(message.content)
    let converted: ErnieMessage | undefined
    if (role === 'system' || role === 'developer') {
      if (text !== '') system.push(text)
      continue
    } else if (role === 'user') {
      converted = { role: 'user', content: text }
    } else if (role === 'assistant') {
      converted = { role: 'assistant', content: text }
      const call = functionCallOf(message)
      if (call !== undefined) {
        converted.function_call = call
        for (const toolCall of list(message.tool_calls)) {
          const id = isRecord(toolCall) ? str(toolCall.id) : undefined
          if (id !== undefined) names.set(id, call.name)
        }
      }
    } else if (role === 'tool' || role === 'function') {
      const id = str(message.tool_call_id)
      const name = (id === undefined ? undefined : names.get(id)) ?? str(message.name) ?? ''
      converted = { role: 'function', name, content: text }
    }
    if (converted === undefined) continue
    const last = out.at(-1)
    if (last !== undefined && last.role === converted.role && last.function_call === undefined && converted.function_call === undefined) {
      last.content = last.content === '' ? converted.content : converted.content === '' ? last.content : `${last.content}\n${converted.content}`
    } else {
      out.push(converted)
    }
  }
  return { system: system.join('\n\n'), messages: out }
}

/** OpenAI function tools as ERNIE's `functions`. */
function convertFunctions (tools: unknown): JsonRecord[] {
  const functions: JsonRecord[] = []
  for (const tool of list(tools)) {
    if (!isRecord(tool) || !isRecord(tool.function)) continue
    const name = str(tool.function.name)
    if (name === undefined) continue
    const fn: Record<string, unknown> = { name, description: str(tool.function.description) ?? '' }
    fn.parameters = isRecord(tool.function.parameters) ? tool.function.parameters : { type: 'object', properties: {} }
    functions.push(fn)
  }
  return functions
}

/**
 * An OpenAI chat completion request as an ERNIE chat request. Mapped: messages (see
 * convertMessages), tools as `functions` (dropped with tool_choice `none`; a named tool_choice
 * as ERNIE's `tool_choice`), temperature (clamped into ERNIE's (0, 1]), top_p, stop,
 * max_tokens / max_completion_tokens as `max_output_tokens`, `user` as `user_id`,
 * response_format json_object, stream; ERNIE's own fields (penalty_score, disable_search, ...)
 * pass through. The model is in the URL.
 */
export function ernieChatBody (req: RelayRequest): Record<string, unknown> {
  const body = req.body
  if (body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'a chat request needs a JSON body')
  const { system, messages } = convertMessages(list(body.messages))
  const out: Record<string, unknown> = { messages }
  if (system !== '') out.system = system
  const temperature = num(body.temperature)
  if (temperature !== undefined) out.temperature = Math.min(1, Math.max(MIN_TEMPERATURE, temperature))
  const topP = num(body.top_p)
  if (topP !== undefined) out.top_p = Math.min(1, Math.max(0, topP))
  const stop = typeof body.stop === 'string' ? [body.stop] : list(body.stop).filter((s): s is string => typeof s === 'string')
  if (stop.length > 0) out.stop = stop
  const maxTokens = num(body.max_completion_tokens) ?? num(body.max_tokens)
  if (maxTokens !== undefined) out.max_output_tokens = maxTokens
  const user = str(body.user)
  if (user !== undefined && user !== '') out.user_id = user
  if (isRecord(body.response_format) && body.response_format.type === 'json_object') out.response_format = 'json_object'
  for (const field of ERNIE_FIELDS) if (body[field] !== undefined) out[field] = body[field]
  const functions = body.tool_choice === 'none' ? [] : convertFunctions(body.tools)
  if (functions.length > 0) {
    out.functions = functions
    const choice = body.tool_choice
    if (isRecord(choice) && isRecord(choice.function) && str(choice.function.name) !== undefined) {
      out.tool_choice = { type: 'function', function: { name: str(choice.function.name) } }
    }
  }
  if (req.stream) out.stream = true
  return out
}

/**
 * An OpenAI embeddings request as Baidu's (`{input: [..], user_id}`): one text or a list of
 * texts; token arrays are refused (Baidu embeds text only).
 */
export function baiduEmbeddingsBody (req: RelayRequest): Record<string, unknown> {
  const body = req.body
  if (body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'an embeddings request needs a JSON body')
  const input = typeof body.input === 'string' ? [body.input] : list(body.input)
  if (input.length === 0 || !input.every((item) => typeof item === 'string')) {
    throw new ProviderError(PROVIDER_ERROR_CODES.unsupported, 'Baidu embeds text: input must be a string or a list of strings')
  }
  const out: Record<string, unknown> = { input }
  const user = str(body.user)
  if (user !== undefined && user !== '') out.user_id = user
  return out
}
