import type { ChannelConfig, RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { contentText, isRecord, list, str, type JsonRecord } from '../core/json.js'

type Json = Record<string, unknown>

/**
 * `instructions` when neither the client nor the channel gives any: the backend refuses a
 * request without them ("Instructions are required").
 */
export const DEFAULT_INSTRUCTIONS = 'You are a helpful assistant.'

/**
 * Fields the backend refuses with 400 "Unsupported parameter": output caps and sampling
 * settings (it manages a subscription's output budget itself). Dropped from Responses clients'
 * bodies; never written for chat clients.
 */
const CODEX_UNSUPPORTED_FIELDS: readonly string[] = ['max_output_tokens', 'max_completion_tokens', 'max_tokens', 'temperature', 'top_p']

/** The channel's own instructions (`setting.instructions`), when it sets some. */
function channelInstructions (channel: ChannelConfig): string | undefined {
  const text = str(channel.setting.instructions)
  return text === undefined || text.trim() === '' ? undefined : text
}

function needBody (req: RelayRequest): Readonly<Record<string, unknown>> {
  if (req.body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, `a ${req.endpoint} request needs a JSON body`)
  return req.body
}

const userText = (text: string): Json => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] })

/**
 * A Responses client's body (the Codex CLI pointed at the gateway, `client.responses.create`)
 * as the backend takes it: the client's fields with `model` replaced, `store: false` and
 * `stream: true` (the backend refuses anything else; a non-streamed client's answer is
 * assembled from the stream), the refused fields dropped (CODEX_UNSUPPORTED_FIELDS), a string
 * `input` as one user message, and `instructions`, when the client sent none, from the
 * channel's `setting.instructions` or DEFAULT_INSTRUCTIONS.
 */
export function codexResponsesBody (channel: ChannelConfig, req: RelayRequest): Json {
  const body: Json = { ...needBody(req), model: req.model, store: false, stream: true }
  for (const name of CODEX_UNSUPPORTED_FIELDS) delete body[name]
  if (typeof body.input === 'string') body.input = [userText(body.input)]
  const instructions = str(body.instructions)
  if (instructions === undefined || instructions.trim() === '') body.instructions = channelInstructions(channel) ?? DEFAULT_INSTRUCTIONS
  return body
}

/** The image of an OpenAI `image_url` part as an `input_image` part. */
function imagePart (part: JsonRecord): Json | undefined {
  const image = part.image_url
  const url = isRecord(image) ? str(image.url) : str(image)
  if (url === undefined || url === '') return undefined
  const detail = isRecord(image) ? str(image.detail) : undefined
  return { type: 'input_image', image_url: url, ...(detail === undefined ? {} : { detail }) }
}

/** An OpenAI `file` part (file_data as a data: URL, or a file_id) as an `input_file` part. */
function filePart (part: JsonRecord): Json | undefined {
  const file = isRecord(part.file) ? part.file : undefined
  const data = str(file?.file_data)
  const id = str(file?.file_id)
  if (data === undefined && id === undefined) return undefined
  const name = str(file?.filename)
  return { type: 'input_file', ...(data === undefined ? {} : { file_data: data }), ...(id === undefined ? {} : { file_id: id }), ...(name === undefined ? {} : { filename: name }) }
}

/** A user message's content as input parts: text, images, files. */
function userParts (content: unknown): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'input_text', text: content }]
  const parts: Json[] = []
  for (const part of list(content)) {
    if (typeof part === 'string') {
      if (part !== '') parts.push({ type: 'input_text', text: part })
      continue
    }
    if (!isRecord(part)) continue
    let converted: Json | undefined
    if (part.type === 'text' || part.type === 'input_text') {
      const text = str(part.text) ?? ''
      if (text !== '') converted = { type: 'input_text', text }
    } else if (part.type === 'image_url') {
      converted = imagePart(part)
    } else if (part.type === 'file') {
      converted = filePart(part)
    }
    if (converted !== undefined) parts.push(converted)
  }
  return parts
}

/** Chat messages as Responses input items, and the system and developer texts. */
function convertMessages (messages: readonly unknown[], systemAsInput: boolean): { system: string[], input: Json[] } {
  const system: string[] = []
  const input: Json[] = []
  for (const message of messages) {
    if (!isRecord(message)) continue
    const role = str(message.role)
    if (role === 'system' || role === 'developer') {
      const text = contentText(message.content)
      if (text === '') continue
      if (systemAsInput) input.push({ type: 'message', role: 'developer', content: [{ type: 'input_text', text }] })
      else system.push(text)
    } else if (role === 'user') {
      const content = userParts(message.content)
      if (content.length > 0) input.push({ type: 'message', role: 'user', content })
    } else if (role === 'assistant') {
      const text = contentText(message.content)
      if (text !== '') input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] })
      for (const call of list(message.tool_calls)) {
        if (!isRecord(call) || !isRecord(call.function)) continue
        const name = str(call.function.name)
        if (name === undefined) continue
        input.push({ type: 'function_call', call_id: str(call.id) ?? '', name, arguments: str(call.function.arguments) ?? '{}' })
      }
    } else if (role === 'tool') {
      input.push({ type: 'function_call_output', call_id: str(message.tool_call_id) ?? '', output: contentText(message.content) })
    }
  }
  return { system, input }
}

/** OpenAI chat function tools as Responses function tools (`strict` only when the client asked for it). */
function convertTools (tools: unknown): Json[] {
  const out: Json[] = []
  for (const tool of list(tools)) {
    if (!isRecord(tool) || tool.type !== 'function' || !isRecord(tool.function)) continue
    const fn = tool.function
    const name = str(fn.name)
    if (name === undefined) continue
    const description = str(fn.description)
    out.push({
      type: 'function',
      name,
      ...(description === undefined ? {} : { description }),
      parameters: isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} },
      strict: fn.strict === true
    })
  }
  return out
}

/** OpenAI chat `tool_choice` in the Responses API's form. */
function convertToolChoice (choice: unknown): unknown {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice
  if (isRecord(choice) && isRecord(choice.function)) {
    const name = str(choice.function.name)
    if (name !== undefined) return { type: 'function', name }
  }
  return undefined
}

/** `response_format` and `verbosity` as the Responses API's `text` controls. */
function textControls (body: JsonRecord): Json | undefined {
  const text: Json = {}
  const format = body.response_format
  if (isRecord(format)) {
    if (format.type === 'json_object') text.format = { type: 'json_object' }
    else if (format.type === 'json_schema' && isRecord(format.json_schema)) {
      const schema = format.json_schema
      text.format = {
        type: 'json_schema',
        name: str(schema.name) ?? 'response',
        schema: isRecord(schema.schema) ? schema.schema : {},
        ...(typeof schema.strict === 'boolean' ? { strict: schema.strict } : {}),
        ...(typeof schema.description === 'string' ? { description: schema.description } : {})
      }
    }
  }
  const verbosity = str(body.verbosity)
  if (verbosity !== undefined) text.verbosity = verbosity
  return Object.keys(text).length === 0 ? undefined : text
}

/**
 * An OpenAI chat completion request as a Responses request for the backend. Mapped: messages
 * (system and developer texts joined as `instructions`, or, when the channel sets its own
 * `setting.instructions`, sent as developer messages; user text, images and files; assistant
 * text and tool calls; tool results), function tools, tool_choice, parallel_tool_calls,
 * reasoning_effort (with `summary: 'auto'`, so the reasoning streams as reasoning_content),
 * response_format and verbosity (`text`), prompt_cache_key. Always `store: false` and `stream:
 * true`. Output caps, sampling settings, stop sequences and `n` have no place on the backend
 * and are not sent.
 */
export function codexChatBody (channel: ChannelConfig, req: RelayRequest): Json {
  const body = needBody(req)
  const fixed = channelInstructions(channel)
  const { system, input } = convertMessages(list(body.messages), fixed !== undefined)
  const joined = system.join('\n\n')
  const out: Json = {
    model: req.model,
    instructions: fixed ?? (joined === '' ? DEFAULT_INSTRUCTIONS : joined),
    input,
    store: false,
    stream: true
  }
  const tools = convertTools(body.tools)
  if (tools.length > 0) {
    out.tools = tools
    const choice = convertToolChoice(body.tool_choice)
    if (choice !== undefined) out.tool_choice = choice
    if (typeof body.parallel_tool_calls === 'boolean') out.parallel_tool_calls = body.parallel_tool_calls
  }
  const effort = str(body.reasoning_effort)
  if (effort !== undefined && effort !== '') out.reasoning = { effort, summary: 'auto' }
  const text = textControls(body)
  if (text !== undefined) out.text = text
  const cacheKey = str(body.prompt_cache_key)
  if (cacheKey !== undefined && cacheKey !== '') out.prompt_cache_key = cacheKey
  return out
}
