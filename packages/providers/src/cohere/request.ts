import type { RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { at, contentText, isRecord, list, num, str, type JsonRecord } from '../core/json.js'

/** Cohere's own chat fields a client may send; they go through as written. */
const NATIVE_FIELDS = ['documents', 'citation_options', 'safety_mode', 'strict_tools', 'thinking', 'priority'] as const

type Message = Record<string, unknown>

function bodyOf (req: RelayRequest): JsonRecord {
  if (req.body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, `a ${req.endpoint} request needs a JSON body`)
  return req.body
}

/** A user turn's content: a string, or text and image parts when it has images. */
function userContent (content: unknown): unknown {
  const parts = list(content)
  if (!parts.some((part) => isRecord(part) && part.type === 'image_url')) return contentText(content)
  const out: JsonRecord[] = []
  for (const part of parts) {
    if (typeof part === 'string') out.push({ type: 'text', text: part })
    else if (isRecord(part) && part.type === 'image_url') {
      const image = part.image_url
      const url = isRecord(image) ? str(image.url) : str(image)
      if (url !== undefined) out.push({ type: 'image_url', image_url: { url, ...(isRecord(image) && str(image.detail) !== undefined ? { detail: image.detail } : {}) } })
    } else if (isRecord(part) && typeof part.text === 'string') out.push({ type: 'text', text: part.text })
  }
  return out
}

/** OpenAI tool calls in Cohere's form (the same fields). */
function toolCalls (calls: unknown): JsonRecord[] {
  const out: JsonRecord[] = []
  for (const call of list(calls)) {
    if (!isRecord(call) || !isRecord(call.function)) continue
    out.push({
      id: str(call.id) ?? '',
      type: 'function',
      function: { name: str(call.function.name) ?? '', arguments: str(call.function.arguments) ?? '{}' }
    })
  }
  return out
}

/**
 * OpenAI messages as Cohere v2 messages: system and developer turns as `system`; user turns
 * with their text (and images as image_url parts); assistant turns with their text, or, when
 * they call tools, the tool calls with the text as the `tool_plan`; tool results as `tool`
 * turns with their call's id.
 */
function convertMessages (messages: readonly unknown[]): Message[] {
  const out: Message[] = []
  for (const message of messages) {
    if (!isRecord(message)) continue
    const role = str(message.role)
    if (role === 'system' || role === 'developer') {
      out.push({ role: 'system', content: contentText(message.content) })
    } else if (role === 'user') {
      out.push({ role: 'user', content: userContent(message.content) })
    } else if (role === 'assistant') {
      const text = contentText(message.content)
      const calls = toolCalls(message.tool_calls)
      if (calls.length > 0) out.push({ role: 'assistant', tool_calls: calls, ...(text === '' ? {} : { tool_plan: text }) })
      else if (text !== '') out.push({ role: 'assistant', content: text })
    } else if (role === 'tool' || role === 'function') {
      out.push({ role: 'tool', tool_call_id: str(message.tool_call_id) ?? '', content: contentText(message.content) })
    }
  }
  return out
}

/** OpenAI function tools (the same shape in Cohere v2), only `name` when the client forces one. */
function convertTools (tools: unknown, only: string | undefined): JsonRecord[] {
  const out: JsonRecord[] = []
  for (const tool of list(tools)) {
    if (!isRecord(tool) || !isRecord(tool.function)) continue
    const name = str(tool.function.name)
    if (name === undefined || (only !== undefined && name !== only)) continue
    const fn: Record<string, unknown> = { name }
    const description = str(tool.function.description)
    if (description !== undefined) fn.description = description
    if (isRecord(tool.function.parameters)) fn.parameters = tool.function.parameters
    out.push({ type: 'function', function: fn })
  }
  return out
}

/** Cohere's `thinking` of an OpenAI `reasoning_effort`: off for `none`, on otherwise. */
function thinkingOf (effort: string | undefined): JsonRecord | undefined {
  if (effort === undefined) return undefined
  return effort === 'none' ? { type: 'disabled' } : { type: 'enabled' }
}

/**
 * An OpenAI chat completion request as a Cohere v2 chat request. Mapped: messages (see
 * convertMessages), tools and tool_choice (`none` as NONE, `required` or a named function as
 * REQUIRED, the named function's tool only), max_tokens / max_completion_tokens, temperature,
 * top_p as `p`, top_k as `k`, stop as `stop_sequences`, seed, frequency and presence penalties,
 * logprobs, response_format (JSON, with its schema as `json_schema`) and reasoning_effort (as
 * `thinking`); Cohere's own fields (documents, citation_options, safety_mode, strict_tools,
 * thinking, priority) go through. Other OpenAI fields have no Cohere counterpart and are left out.
 */
export function cohereChatBody (req: RelayRequest): Record<string, unknown> {
  const body = bodyOf(req)
  const out: Record<string, unknown> = { model: req.model, messages: convertMessages(list(body.messages)) }
  if (req.stream) out.stream = true
  const choice = body.tool_choice
  const forced = isRecord(choice) ? str(at(choice, 'function', 'name')) : undefined
  const tools = convertTools(body.tools, forced)
  if (tools.length > 0 && choice !== 'none') {
    out.tools = tools
    if (choice === 'required' || forced !== undefined) out.tool_choice = 'REQUIRED'
  }
  const numbers: Array<[string, unknown]> = [
    ['max_tokens', body.max_completion_tokens ?? body.max_tokens],
    ['temperature', body.temperature],
    ['p', body.top_p],
    ['k', body.top_k],
    ['seed', body.seed],
    ['frequency_penalty', body.frequency_penalty],
    ['presence_penalty', body.presence_penalty]
  ]
  for (const [key, value] of numbers) {
    const n = num(value)
    if (n !== undefined) out[key] = n
  }
  const stop = typeof body.stop === 'string' ? [body.stop] : list(body.stop).filter((s): s is string => typeof s === 'string')
  if (stop.length > 0) out.stop_sequences = stop
  if (typeof body.logprobs === 'boolean') out.logprobs = body.logprobs
  const format = isRecord(body.response_format) ? body.response_format : undefined
  if (format?.type === 'json_object') out.response_format = { type: 'json_object' }
  if (format?.type === 'json_schema') {
    const schema = at(format, 'json_schema', 'schema')
    out.response_format = isRecord(schema) ? { type: 'json_object', json_schema: schema } : { type: 'json_object' }
  }
  const thinking = thinkingOf(str(body.reasoning_effort))
  if (thinking !== undefined) out.thinking = thinking
  for (const field of NATIVE_FIELDS) if (body[field] !== undefined) out[field] = body[field]
  return out
}

/**
 * An OpenAI embeddings request as Cohere's v2 embed request: the input as `texts`, float vectors
 * (base64 is made from them for clients that ask), `dimensions` as `output_dimension`; the
 * client's Cohere `input_type` (default `search_document`) and `truncate` go through.
 */
export function cohereEmbedBody (req: RelayRequest): Record<string, unknown> {
  const body = bodyOf(req)
  const input = typeof body.input === 'string' ? [body.input] : list(body.input)
  if (input.length === 0 || !input.every((item): item is string => typeof item === 'string')) {
    throw new ProviderError(PROVIDER_ERROR_CODES.unsupported, 'Cohere embeds text: the input must be a string or a list of strings')
  }
  const out: Record<string, unknown> = {
    model: req.model,
    texts: input,
    input_type: str(body.input_type) ?? 'search_document',
    embedding_types: ['float']
  }
  const dimensions = num(body.dimensions) ?? num(body.output_dimension)
  if (dimensions !== undefined) out.output_dimension = dimensions
  if (typeof body.truncate === 'string') out.truncate = body.truncate
  return out
}

/** A rerank document as the text Cohere v2 takes: a string, a `{text}` object's text, else the object as JSON. */
function documentText (document: unknown): string {
  if (typeof document === 'string') return document
  if (isRecord(document) && typeof document.text === 'string') return document.text
  return JSON.stringify(document)
}

/** The documents of a rerank request as texts. */
export function rerankDocuments (req: RelayRequest): string[] {
  return list(req.body?.documents).map(documentText)
}

/**
 * A rerank request (Jina/Cohere shape) as Cohere's v2 rerank request: query, documents as texts,
 * top_n and max_tokens_per_doc. `return_documents`, which v2 dropped, is honoured in the answer.
 */
export function cohereRerankBody (req: RelayRequest): Record<string, unknown> {
  const body = bodyOf(req)
  const out: Record<string, unknown> = { model: req.model, query: body.query, documents: rerankDocuments(req) }
  const topN = num(body.top_n)
  if (topN !== undefined) out.top_n = topN
  const maxTokens = num(body.max_tokens_per_doc)
  if (maxTokens !== undefined) out.max_tokens_per_doc = maxTokens
  return out
}
