import { randomBytes } from 'node:crypto'
import { at, contentText, isRecord, list, num, parseJson, str } from '../../core/json.js'
import { readUsage } from '../../openai-compatible/usage.js'
import { CUSTOM_TOOL_INPUT, customToolNames } from './request.js'

type Json = Record<string, unknown>

/** Token counts in the Responses API's names. */
export interface ResponsesUsage {
  input_tokens: number
  input_tokens_details: { cached_tokens: number }
  output_tokens: number
  output_tokens_details: { reasoning_tokens: number }
  total_tokens: number
}

/**
 * A chat `usage` object in the Responses API's names: input_tokens = prompt_tokens (cached
 * included), input_tokens_details.cached_tokens, output_tokens = completion_tokens (reasoning
 * included), output_tokens_details.reasoning_tokens = `completion_tokens_details.reasoning_tokens`
 * (0 when absent), total_tokens (or the sum). Undefined when the value carries no token counts.
 */
export function responsesUsage (usage: unknown): ResponsesUsage | undefined {
  const read = readUsage(usage)
  if (read === undefined) return undefined
  const reasoning = Math.min(num(at(usage, 'completion_tokens_details', 'reasoning_tokens')) ?? 0, read.completionTokens)
  return {
    input_tokens: read.promptTokens,
    input_tokens_details: { cached_tokens: read.cachedTokens ?? 0 },
    output_tokens: read.completionTokens,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: (isRecord(usage) ? num(usage.total_tokens) : undefined) ?? read.promptTokens + read.completionTokens
  }
}

/** `resp_` plus the upstream's completion id (without `chatcmpl-`), or a random one. */
export function responseId (chatId: unknown): string {
  const id = str(chatId)
  const base = id === undefined ? '' : id.startsWith('chatcmpl-') ? id.slice('chatcmpl-'.length) : id
  return 'resp_' + (base === '' ? randomBytes(12).toString('hex') : base)
}

/** The id of an output item: its kind's prefix (`msg`, `rs`, `fc`, `ctc`), the response's id and its place. */
export function itemId (prefix: string, response: string, index: number): string {
  return `${prefix}_${response.slice('resp_'.length)}_${index}`
}

/** The status a chat finish reason gives the response, and why it is incomplete. */
export function responseStatus (finishReason: unknown): { status: 'completed' | 'incomplete', incomplete_details: { reason: string } | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } }
  return { status: 'completed', incomplete_details: null }
}

/** An `output_text` content part. */
export function outputText (text: string): Json {
  return { type: 'output_text', annotations: [], logprobs: [], text }
}

/**
 * A `response` object without its output: the request's settings echoed as the Responses API
 * does (instructions, max_output_tokens, parallel_tool_calls, reasoning, temperature, text,
 * tool_choice, tools, top_p, truncation, user, metadata), `store: false` (nothing is stored) and
 * `previous_response_id: null`.
 */
export function responseShell (request: Readonly<Record<string, unknown>> | undefined, model: string, id: string, createdAt: number): Json {
  const body = request ?? {}
  const reasoning = isRecord(body.reasoning) ? body.reasoning : {}
  const shell: Json = {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: str(body.instructions) ?? null,
    max_output_tokens: num(body.max_output_tokens) ?? null,
    model,
    output: [],
    parallel_tool_calls: typeof body.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : true,
    previous_response_id: null,
    reasoning: { effort: str(reasoning.effort) ?? null, summary: str(reasoning.summary) ?? null },
    store: false,
    temperature: num(body.temperature) ?? null,
    text: isRecord(body.text) ? body.text : { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: num(body.top_p) ?? null,
    truncation: str(body.truncation) ?? 'disabled',
    usage: null
  }
  const user = str(body.user)
  if (user !== undefined) shell.user = user
  shell.metadata = isRecord(body.metadata) ? body.metadata : {}
  return shell
}

/** The input of a custom tool call: the string the function's arguments carry, else the arguments as they came. */
export function customInput (args: string): string {
  const parsed = parseJson(args)
  const input = isRecord(parsed) ? parsed[CUSTOM_TOOL_INPUT] : undefined
  return typeof input === 'string' ? input : args
}

/** A call id for a tool call the upstream gave none (legacy `function_call`). */
export function callIdFor (item: string): string {
  return 'call_' + item.slice(item.indexOf('_') + 1)
}

/** The id of a tool call item: `fc_…` for a function call, `ctc_…` for a custom tool call. */
export function toolItemId (response: string, index: number, custom: boolean): string {
  return itemId(custom ? 'ctc' : 'fc', response, index)
}

/**
 * A tool call as an output item: `function_call` (`call_id`, `name`, `arguments`), or
 * `custom_tool_call` (`input`, customInput) when `custom` (`name` is one of the request's custom tools).
 */
export function toolCallItem (id: string, callId: string, name: string, args: string, custom: boolean, status: string): Json {
  if (custom) return { id, type: 'custom_tool_call', status, call_id: callId, name, input: customInput(args) }
  return { id, type: 'function_call', status, arguments: args, call_id: callId, name }
}

/**
 * Converts a chat completion to a Responses API `response` object (responseShell, with
 * `created_at` from the completion's `created`). Output items, in order: a `reasoning` item
 * (`summary: []`, the text as one `reasoning_text` content part) from `reasoning_content` (or
 * `reasoning`), a `message` item with one `output_text` part (content and refusal; always
 * present when nothing else is), one `function_call` item per tool call or legacy
 * `function_call` (`custom_tool_call` for the request's custom tools). Only the first choice is
 * read. Status `completed`, or `incomplete` with `incomplete_details.reason` max_output_tokens
 * (finish reason length) or content_filter. Usage by responsesUsage (null when the upstream sent none).
 */
export function chatToResponsesResponse (chat: Readonly<Record<string, unknown>>, model: string, request?: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const id = responseId(chat.id)
  const custom = customToolNames(request)
  const choice = list(chat.choices).find(isRecord)
  const message = choice !== undefined && isRecord(choice.message) ? choice.message : {}
  const { status, incomplete_details } = responseStatus(choice?.finish_reason)
  const itemStatus = status === 'completed' ? 'completed' : 'incomplete'
  const output: Json[] = []

  const reasoning = str(message.reasoning_content) ?? str(message.reasoning) ?? ''
  if (reasoning !== '') output.push({ id: itemId('rs', id, output.length), type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: reasoning }] })
  const text = contentText(message.content) + (str(message.refusal) ?? '')
  const calls: Array<[string | undefined, unknown]> = []
  for (const call of list(message.tool_calls)) {
    if (isRecord(call) && isRecord(call.function)) calls.push([str(call.id), call.function])
  }
  if (isRecord(message.function_call)) calls.push([undefined, message.function_call])
  if (text !== '' || calls.length === 0) {
    output.push({ id: itemId('msg', id, output.length), type: 'message', status: itemStatus, role: 'assistant', content: [outputText(text)] })
  }
  for (const [callId, fn] of calls) {
    const name = str(at(fn, 'name')) ?? ''
    const raw = at(fn, 'arguments')
    const args = isRecord(raw) ? JSON.stringify(raw) : str(raw) ?? ''
    const item = toolItemId(id, output.length, custom.has(name))
    output.push(toolCallItem(item, callId || callIdFor(item), name, args, custom.has(name), 'completed'))
  }

  const created = num(chat.created)
  const response = responseShell(request, model, id, created ?? Math.floor(Date.now() / 1000))
  response.status = status
  response.incomplete_details = incomplete_details
  response.output = output
  response.usage = responsesUsage(chat.usage) ?? null
  return response
}
