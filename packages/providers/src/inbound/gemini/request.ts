import { reasoningEffortForBudget } from '../anthropic/request.js'
import { isRecord, list, num, str, type JsonRecord } from '../../core/json.js'

/** One OpenAI chat message or content part, as built here (plain JSON). */
type Json = Record<string, unknown>

/**
 * The OpenAI `reasoning_effort` for a Gemini thinking config: `thinkingLevel` MINIMAL/LOW →
 * low, MEDIUM → medium, HIGH → high; else a positive `thinkingBudget` by the same thresholds as
 * Anthropic budgets (REASONING_BUDGET_THRESHOLDS: below 4096 low, below 16384 medium, else
 * high). A budget of 0 (thinking off) or -1 (dynamic, the model decides) gives undefined: the
 * upstream's default.
 */
export function reasoningEffortForThinking (config: unknown): 'low' | 'medium' | 'high' | undefined {
  if (!isRecord(config)) return undefined
  const level = str(config.thinkingLevel)?.toUpperCase()
  if (level === 'MINIMAL' || level === 'LOW') return 'low'
  if (level === 'MEDIUM') return 'medium'
  if (level === 'HIGH') return 'high'
  const budget = num(config.thinkingBudget)
  return budget !== undefined && budget > 0 ? reasoningEffortForBudget(budget) : undefined
}

/**
 * A Gemini (OpenAPI-subset) schema as JSON Schema: upper-case types (`OBJECT`, `STRING`) in
 * lower case, `nullable: true` as a `null` type, `propertyOrdering` dropped; nested
 * properties, items and anyOf converted too. Other keys are kept.
 */
function geminiSchemaToJsonSchema (schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(geminiSchemaToJsonSchema)
  if (!isRecord(schema)) return schema
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'propertyOrdering' || key === 'nullable') continue
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase()
    else if (key === 'properties' && isRecord(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, geminiSchemaToJsonSchema(inner)]))
    } else if (key === 'items' || key === 'anyOf' || key === 'oneOf' || key === 'allOf') out[key] = geminiSchemaToJsonSchema(value)
    else out[key] = value
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null']
  return out
}

/** Text parts of a Content (or a plain string), thought parts left out, joined by `separator`. */
function contentText (content: unknown, separator: string): string {
  if (typeof content === 'string') return content
  const parts = isRecord(content) ? content.parts : content
  const texts: string[] = []
  for (const part of list(parts)) {
    if (isRecord(part) && part.thought !== true && typeof part.text === 'string') texts.push(part.text)
  }
  return texts.join(separator)
}

/** An `inlineData` or `fileData` part as an OpenAI content part. */
function mediaPart (part: JsonRecord): Json | undefined {
  if (isRecord(part.inlineData)) {
    const data = str(part.inlineData.data)
    if (data === undefined) return undefined
    const mime = str(part.inlineData.mimeType) ?? 'application/octet-stream'
    const url = `data:${mime};base64,${data}`
    if (mime.startsWith('image/')) return { type: 'image_url', image_url: { url } }
    if (mime === 'audio/wav' || mime === 'audio/x-wav') return { type: 'input_audio', input_audio: { data, format: 'wav' } }
    if (mime === 'audio/mp3' || mime === 'audio/mpeg') return { type: 'input_audio', input_audio: { data, format: 'mp3' } }
    const ext = mime === 'application/pdf' ? 'pdf' : (mime.split('/')[1] ?? 'bin')
    return { type: 'file', file: { filename: `document.${ext}`, file_data: url } }
  }
  if (isRecord(part.fileData)) {
    const uri = str(part.fileData.fileUri)
    if (uri === undefined) return undefined
    const mime = str(part.fileData.mimeType)
    if (mime === undefined || mime.startsWith('image/')) return { type: 'image_url', image_url: { url: uri } }
    // Chat completions take no file URL: the model is told where the file is.
    return { type: 'text', text: `File (${mime}): ${uri}` }
  }
  return undefined
}

/** Ids of the function calls made so far, per function name, not yet answered (in order). */
type OpenCalls = Map<string, string[]>

/**
 * A user (or legacy `function`) turn: each functionResponse becomes a `tool` message (first, as
 * OpenAI wants them right after the assistant's tool calls), then the rest as one user message.
 */
function userMessages (parts: readonly unknown[], open: OpenCalls, nextId: () => string): Json[] {
  const messages: Json[] = []
  const content: Json[] = []
  for (const part of parts) {
    if (!isRecord(part) || part.thought === true) continue
    if (isRecord(part.functionResponse)) {
      const response = part.functionResponse
      const name = str(response.name) ?? ''
      const waiting = open.get(name) ?? []
      let id = str(response.id)
      if (id !== undefined && waiting.includes(id)) waiting.splice(waiting.indexOf(id), 1)
      else id ??= waiting.shift() ?? nextId()
      messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify(response.response ?? {}) })
      continue
    }
    if (typeof part.text === 'string') {
      content.push({ type: 'text', text: part.text })
      continue
    }
    const media = mediaPart(part)
    if (media !== undefined) content.push(media)
  }
  if (content.length > 0) {
    const allText = content.every((p) => p.type === 'text')
    messages.push({ role: 'user', content: allText ? content.map((p) => p.text as string).join('\n') : content })
  }
  return messages
}

/** A model turn: text parts as the content (joined as they were streamed), functionCalls as tool_calls; thoughts dropped. */
function assistantMessage (parts: readonly unknown[], open: OpenCalls, nextId: () => string): Json | undefined {
  let text = ''
  let hasText = false
  const calls: Json[] = []
  for (const part of parts) {
    if (!isRecord(part) || part.thought === true) continue
    if (typeof part.text === 'string') {
      text += part.text
      hasText = true
    } else if (isRecord(part.functionCall)) {
      const call = part.functionCall
      const name = str(call.name) ?? ''
      const id = str(call.id) || nextId()
      const waiting = open.get(name)
      if (waiting === undefined) open.set(name, [id])
      else waiting.push(id)
      calls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(isRecord(call.args) ? call.args : {}) } })
    }
  }
  if (!hasText && calls.length === 0) return undefined
  const message: Json = { role: 'assistant', content: hasText ? text : null }
  if (calls.length > 0) message.tool_calls = calls
  return message
}

/** Function declarations as OpenAI function tools (other tools, such as googleSearch, are dropped). */
function functionTools (tools: unknown): Json[] {
  const out: Json[] = []
  for (const tool of list(tools)) {
    if (!isRecord(tool)) continue
    for (const declaration of list(tool.functionDeclarations)) {
      if (!isRecord(declaration)) continue
      const name = str(declaration.name)
      if (name === undefined) continue
      const parameters = isRecord(declaration.parametersJsonSchema)
        ? declaration.parametersJsonSchema
        : isRecord(declaration.parameters) ? geminiSchemaToJsonSchema(declaration.parameters) : { type: 'object', properties: {} }
      const fn: Json = { name, parameters }
      const description = str(declaration.description)
      if (description !== undefined) fn.description = description
      out.push({ type: 'function', function: fn })
    }
  }
  return out
}

/** Sets tool_choice (and narrows tools) from `toolConfig.functionCallingConfig`. */
function applyToolConfig (out: Json, tools: Json[], toolConfig: unknown): void {
  const config = isRecord(toolConfig) && isRecord(toolConfig.functionCallingConfig) ? toolConfig.functionCallingConfig : undefined
  if (config === undefined) return
  const mode = str(config.mode)?.toUpperCase()
  const allowed = list(config.allowedFunctionNames).filter((n): n is string => typeof n === 'string')
  if (mode === 'NONE') out.tool_choice = 'none'
  else if (mode === 'AUTO' || mode === 'VALIDATED') out.tool_choice = 'auto'
  else if (mode === 'ANY') {
    if (allowed.length === 1) out.tool_choice = { type: 'function', function: { name: allowed[0] } }
    else {
      out.tool_choice = 'required'
      if (allowed.length > 1) {
        const narrowed = tools.filter((tool) => allowed.includes((tool.function as Json).name as string))
        if (narrowed.length > 0) out.tools = narrowed
      }
    }
  }
}

/**
 * Converts a Gemini GenerateContentRequest (the body of `POST /v1beta/models/{model}:generateContent`
 * or `:streamGenerateContent`) to an OpenAI chat completions request for an OpenAI-compatible
 * channel. `model` comes from the URL; `stream` from the method called.
 *
 * - `systemInstruction` (a Content, or a string) becomes a system message (text parts joined by a newline).
 * - `contents`: role `user` (or `function`, or none) becomes user messages, `model` assistant
 *   messages. User parts: `text`; `inlineData` images as `image_url` data: URLs, WAV/MP3 as
 *   `input_audio`, anything else (PDF) as a `file` part; `fileData` as an `image_url` with the
 *   URI (images, or no MIME type) or a text naming the file. All-text user content is sent as
 *   one string (parts joined by a newline).
 * - Model parts: text joined as is (as Google streams it), `functionCall` as `tool_calls` (id:
 *   the part's `id`, else `call_<n>` numbered over the conversation, arguments
 *   `JSON.stringify(args)`); `thought` parts are dropped.
 * - `functionResponse` parts become `tool` messages placed before the rest of their turn, with
 *   `content: JSON.stringify(response)` and the `tool_call_id` of the part's `id` or else of the
 *   earliest unanswered call of that name.
 * - `tools[].functionDeclarations` become function tools (`parametersJsonSchema` as is,
 *   `parameters` through geminiSchemaToJsonSchema); other tools are dropped.
 *   `toolConfig.functionCallingConfig.mode` AUTO/VALIDATED → auto, NONE → none, ANY → required,
 *   or the named function when `allowedFunctionNames` has one name (several narrow the tools).
 * - `generationConfig`: temperature, topP, presencePenalty, frequencyPenalty, seed copied;
 *   maxOutputTokens → max_tokens, stopSequences → stop, candidateCount → n; responseMimeType
 *   `application/json` → `response_format` json_object, or json_schema when responseJsonSchema
 *   or responseSchema is given; thinkingConfig → `reasoning_effort` (reasoningEffortForThinking).
 * - `stream` sets `stream: true` and `stream_options.include_usage`.
 *
 * Every other field (safetySettings, cachedContent, topK, ...) is dropped, as OpenAI upstreams
 * reject fields they do not know. The input is not modified.
 */
export function geminiToChatRequest (body: Readonly<Record<string, unknown>>, model: string, stream: boolean): Record<string, unknown> {
  const out: Json = { model }
  const messages: Json[] = []
  const system = contentText(body.systemInstruction, '\n')
  if (system !== '') messages.push({ role: 'system', content: system })

  const open: OpenCalls = new Map()
  let counter = 0
  const nextId = (): string => `call_${counter++}`
  for (const content of list(body.contents)) {
    if (!isRecord(content)) continue
    const parts = list(content.parts)
    if (content.role === 'model') {
      const message = assistantMessage(parts, open, nextId)
      if (message !== undefined) messages.push(message)
    } else {
      messages.push(...userMessages(parts, open, nextId))
    }
  }
  out.messages = messages

  const config = isRecord(body.generationConfig) ? body.generationConfig : {}
  const copies: Array<[string, string]> = [
    ['temperature', 'temperature'], ['topP', 'top_p'], ['maxOutputTokens', 'max_tokens'], ['candidateCount', 'n'],
    ['presencePenalty', 'presence_penalty'], ['frequencyPenalty', 'frequency_penalty'], ['seed', 'seed']
  ]
  for (const [from, to] of copies) {
    const value = num(config[from])
    if (value !== undefined) out[to] = value
  }
  const stop = list(config.stopSequences).filter((s): s is string => typeof s === 'string')
  if (stop.length > 0) out.stop = stop
  if (str(config.responseMimeType) === 'application/json') {
    const schema = isRecord(config.responseJsonSchema)
      ? config.responseJsonSchema
      : isRecord(config.responseSchema) ? geminiSchemaToJsonSchema(config.responseSchema) : undefined
    out.response_format = schema === undefined ? { type: 'json_object' } : { type: 'json_schema', json_schema: { name: 'response', schema } }
  }
  const effort = reasoningEffortForThinking(config.thinkingConfig)
  if (effort !== undefined) out.reasoning_effort = effort
  if (stream) {
    out.stream = true
    out.stream_options = { include_usage: true }
  }

  const tools = functionTools(body.tools)
  if (tools.length > 0) {
    out.tools = tools
    applyToolConfig(out, tools, body.toolConfig)
  }
  return out
}
