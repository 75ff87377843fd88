import { contentText, isRecord, list, num, str, type JsonRecord } from '../../core/json.js'

/** One OpenAI chat message, content part or tool, as built here (plain JSON). */
type Json = Record<string, unknown>

/**
 * The single string parameter a custom (free-form) tool is given when offered to a chat
 * upstream as a function; the call's input is read back from it.
 */
export const CUSTOM_TOOL_INPUT = 'input'

/**
 * The chat `reasoning_effort` for a Responses `reasoning.effort`: low, medium and high as they
 * are, `minimal` as low, `xhigh` as high; `none` (and anything else) gives undefined, the
 * upstream's default, as chat upstreams outside OpenAI know only the three middle levels.
 */
export function chatReasoningEffort (effort: unknown): 'low' | 'medium' | 'high' | undefined {
  switch (effort) {
    case 'minimal':
    case 'low': return 'low'
    case 'medium': return 'medium'
    case 'high':
    case 'xhigh': return 'high'
    default: return undefined
  }
}

/** The names of the request's custom (free-form input) tools, which answer as `custom_tool_call` items. */
export function customToolNames (body: Readonly<Record<string, unknown>> | undefined): ReadonlySet<string> {
  const names = new Set<string>()
  for (const tool of list(body?.tools)) {
    const name = isRecord(tool) && tool.type === 'custom' ? str(tool.name) : undefined
    if (name !== undefined) names.add(name)
  }
  return names
}

/** A Responses input content part as a chat content part, or undefined for parts chat has no place for. */
function chatPart (part: unknown): Json | undefined {
  if (typeof part === 'string') return { type: 'text', text: part }
  if (!isRecord(part)) return undefined
  switch (part.type) {
    case 'input_text':
    case 'output_text':
    case 'text': {
      const text = str(part.text)
      return text === undefined ? undefined : { type: 'text', text }
    }
    case 'refusal': {
      const text = str(part.refusal)
      return text === undefined ? undefined : { type: 'text', text }
    }
    case 'input_image': {
      // A file_id names an upload on OpenAI's Files API, which no other upstream can read.
      const url = str(part.image_url)
      if (url === undefined || url === '') return undefined
      const image: Json = { url }
      const detail = str(part.detail)
      if (detail === 'low' || detail === 'high') image.detail = detail
      return { type: 'image_url', image_url: image }
    }
    case 'input_file': {
      const data = str(part.file_data)
      if (data !== undefined && data !== '') return { type: 'file', file: { filename: str(part.filename) ?? 'document.pdf', file_data: data } }
      const url = str(part.file_url)
      // Chat completions take no file URL: the model is told where the file is.
      return url === undefined || url === '' ? undefined : { type: 'text', text: `File${part.filename === undefined ? '' : ` "${String(part.filename)}"`}: ${url}` }
    }
    case 'input_audio': {
      const audio = part.input_audio
      return isRecord(audio) ? { type: 'input_audio', input_audio: audio } : undefined
    }
    default:
      return undefined
  }
}

/** Chat parts of a content value: a string, or a list of Responses parts. */
function chatParts (content: unknown): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  const parts: Json[] = []
  for (const part of list(content)) {
    const converted = chatPart(part)
    if (converted !== undefined) parts.push(converted)
  }
  return parts
}

/** User content: a string when it is all text (what every chat upstream takes), else the parts. */
function userContent (parts: Json[]): string | Json[] {
  return parts.every((part) => part.type === 'text') ? parts.map((part) => part.text as string).join('\n') : parts
}

/** Builds the chat messages of a Responses conversation, item by item. */
class Conversation {
  readonly messages: Json[] = []
  /** The assistant message the next function calls join (the last message, when it is one). */
  private assistant: Json | undefined
  /** Images and files returned by tool outputs: chat tool messages carry text only, so they follow as a user message. */
  private toolMedia: Json[] = []

  private push (message: Json): void {
    this.flushToolMedia()
    this.messages.push(message)
    this.assistant = message.role === 'assistant' ? message : undefined
  }

  private flushToolMedia (): void {
    if (this.toolMedia.length === 0) return
    const media = this.toolMedia
    this.toolMedia = []
    this.messages.push({ role: 'user', content: media })
  }

  /** A message item (or an EasyInputMessage, which has no `type`). */
  message (item: JsonRecord): void {
    const role = str(item.role)
    if (role === 'system' || role === 'developer') {
      // Developer messages go as system ones: chat upstreams outside OpenAI know no developer role.
      const text = typeof item.content === 'string' ? item.content : contentText(chatParts(item.content))
      this.push({ role: 'system', content: text })
    } else if (role === 'assistant') {
      const text = typeof item.content === 'string' ? item.content : contentText(chatParts(item.content))
      this.push({ role: 'assistant', content: text })
    } else if (role === 'user') {
      const parts = chatParts(item.content)
      if (parts.length > 0) this.push({ role: 'user', content: userContent(parts) })
    }
  }

  /** A function (or custom tool) call: a tool call of the assistant message before it, or of a new one. */
  call (id: string, name: string, args: string): void {
    let assistant = this.assistant
    if (assistant === undefined) {
      assistant = { role: 'assistant', content: null }
      this.push(assistant)
    }
    const calls = Array.isArray(assistant.tool_calls) ? assistant.tool_calls as Json[] : (assistant.tool_calls = [])
    calls.push({ id, type: 'function', function: { name, arguments: args } })
  }

  /** A tool's output: a tool message (its text), its images and files kept for a user message after the run of outputs. */
  output (id: string, output: unknown): void {
    const parts = chatParts(output)
    const texts: string[] = []
    for (const part of parts) {
      if (part.type === 'text') texts.push(part.text as string)
      else this.toolMedia.push(part)
    }
    this.messages.push({ role: 'tool', tool_call_id: id, content: texts.join('\n') })
    this.assistant = undefined
  }

  end (): Json[] {
    this.flushToolMedia()
    return this.messages
  }
}

/** Function and custom tools as chat function tools; hosted tools (web search, file search, ...) are dropped. */
function chatTools (tools: unknown): Json[] {
  const out: Json[] = []
  for (const tool of list(tools)) {
    if (!isRecord(tool)) continue
    const name = str(tool.name)
    if (name === undefined) continue
    const description = str(tool.description)
    let fn: Json
    if (tool.type === 'function') {
      fn = { name, parameters: isRecord(tool.parameters) ? tool.parameters : { type: 'object', properties: {} } }
      if (typeof tool.strict === 'boolean') fn.strict = tool.strict
    } else if (tool.type === 'custom') {
      const format = isRecord(tool.format) && tool.format.type === 'grammar' ? ` (${str(tool.format.syntax) ?? 'grammar'}: ${str(tool.format.definition) ?? ''})` : ''
      fn = {
        name,
        parameters: {
          type: 'object',
          properties: { [CUSTOM_TOOL_INPUT]: { type: 'string', description: `The tool's free-form input${format}` } },
          required: [CUSTOM_TOOL_INPUT]
        }
      }
    } else continue
    if (description !== undefined) fn.description = description
    out.push({ type: 'function', function: fn })
  }
  return out
}

/** `tool_choice` in chat's words, or undefined for choices chat cannot express (hosted tools). */
function chatToolChoice (choice: unknown): unknown {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice
  if (!isRecord(choice)) return undefined
  if (choice.type === 'function' || choice.type === 'custom') {
    const name = str(choice.name)
    return name === undefined ? undefined : { type: 'function', function: { name } }
  }
  if (choice.type === 'allowed_tools') return choice.mode === 'required' ? 'required' : 'auto'
  return undefined
}

/**
 * Converts an OpenAI Responses request (`POST /v1/responses`) to a chat completions request for
 * a channel without the Responses API.
 *
 * - `instructions` becomes the first system message; `input` as a string is one user message.
 * - `input` items: messages (typed or not) by role — system and developer as system messages,
 *   user content parts `input_text`, `input_image` (by URL or data: URL), `input_file` (file
 *   data as a `file` part, a URL as text) and `input_audio` as chat parts (all-text content is
 *   sent as a string), assistant `output_text` / `refusal` as its text; `function_call` (and
 *   `custom_tool_call`) items become `tool_calls` of the assistant message before them (or of
 *   a new one), each `function_call_output` (and `custom_tool_call_output`) a `tool` message
 *   (images and files of an output follow the run of outputs as a user message). Reasoning
 *   items and item references are dropped: no other provider can read them.
 * - `tools` of type function become chat function tools; custom tools become functions taking
 *   one string, CUSTOM_TOOL_INPUT; hosted tools are dropped. `tool_choice` auto/none/required,
 *   a named function or custom tool, or allowed_tools (its mode) are mapped;
 *   `parallel_tool_calls` is copied when tools are sent.
 * - `max_output_tokens` becomes `max_tokens`; `temperature`, `top_p`, `user` are copied;
 *   `reasoning.effort` becomes `reasoning_effort` (chatReasoningEffort); `text.format`
 *   json_schema / json_object becomes `response_format`; `stream: true` also asks for usage.
 *
 * `store`, `include`, `metadata`, `previous_response_id`, `prompt_cache_key`, `truncation` and
 * every other field are dropped (nothing is stored: a `previous_response_id` gives the model no
 * earlier turns). The input is not modified.
 */
export function responsesToChatRequest (body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Json = {}
  if (body.model !== undefined) out.model = body.model

  const conversation = new Conversation()
  const instructions = str(body.instructions)
  if (instructions !== undefined && instructions !== '') conversation.message({ role: 'system', content: instructions })
  if (typeof body.input === 'string') conversation.message({ role: 'user', content: body.input })
  for (const item of list(body.input)) {
    if (typeof item === 'string') {
      conversation.message({ role: 'user', content: item })
      continue
    }
    if (!isRecord(item)) continue
    switch (item.type ?? 'message') {
      case 'message':
        conversation.message(item)
        break
      case 'function_call':
        conversation.call(str(item.call_id) ?? str(item.id) ?? '', str(item.name) ?? '', str(item.arguments) ?? '{}')
        break
      case 'custom_tool_call':
        conversation.call(str(item.call_id) ?? str(item.id) ?? '', str(item.name) ?? '', JSON.stringify({ [CUSTOM_TOOL_INPUT]: str(item.input) ?? '' }))
        break
      case 'function_call_output':
      case 'custom_tool_call_output':
        conversation.output(str(item.call_id) ?? '', item.output)
        break
      default:
        break
    }
  }
  out.messages = conversation.end()

  const maxTokens = num(body.max_output_tokens)
  if (maxTokens !== undefined) out.max_tokens = maxTokens
  const temperature = num(body.temperature)
  if (temperature !== undefined) out.temperature = temperature
  const topP = num(body.top_p)
  if (topP !== undefined) out.top_p = topP
  const user = str(body.user)
  if (user !== undefined && user !== '') out.user = user
  if (body.stream === true) {
    out.stream = true
    out.stream_options = { include_usage: true }
  }

  const tools = chatTools(body.tools)
  if (tools.length > 0) {
    out.tools = tools
    const choice = chatToolChoice(body.tool_choice)
    if (choice !== undefined) out.tool_choice = choice
    if (typeof body.parallel_tool_calls === 'boolean') out.parallel_tool_calls = body.parallel_tool_calls
  }

  const effort = chatReasoningEffort(isRecord(body.reasoning) ? body.reasoning.effort : undefined)
  if (effort !== undefined) out.reasoning_effort = effort
  const format = isRecord(body.text) ? body.text.format : undefined
  if (isRecord(format) && format.type === 'json_schema' && isRecord(format.schema)) {
    const schema: Json = { name: str(format.name) ?? 'response', schema: format.schema }
    if (typeof format.strict === 'boolean') schema.strict = format.strict
    const description = str(format.description)
    if (description !== undefined) schema.description = description
    out.response_format = { type: 'json_schema', json_schema: schema }
  } else if (isRecord(format) && format.type === 'json_object') {
    out.response_format = { type: 'json_object' }
  }
  return out
}
