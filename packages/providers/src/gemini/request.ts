import type { ChannelConfig, RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { at, contentText, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'

/** Thinking budget (tokens) for each OpenAI `reasoning_effort`; other values leave Gemini's default. */
const GEMINI_EFFORT_BUDGET: Readonly<Record<string, number>> = { low: 1024, medium: 8192, high: 24576 }

/**
 * The placeholder Google documents for a function call whose thought signature is unknown (a
 * conversation that came through a client that cannot carry it); Gemini 3 models refuse a
 * function call of the current turn without one.
 */
const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator'

/** Gemini's most stop sequences. */
const MAX_STOP_SEQUENCES = 5

/** Harm categories a channel-wide safety threshold applies to. */
const HARM_CATEGORIES = [
  'HARM_CATEGORY_HARASSMENT',
  'HARM_CATEGORY_HATE_SPEECH',
  'HARM_CATEGORY_SEXUALLY_EXPLICIT',
  'HARM_CATEGORY_DANGEROUS_CONTENT',
  'HARM_CATEGORY_CIVIC_INTEGRITY'
]

const THRESHOLD = /^(BLOCK_NONE|BLOCK_ONLY_HIGH|BLOCK_MEDIUM_AND_ABOVE|BLOCK_LOW_AND_ABOVE|OFF|HARM_BLOCK_THRESHOLD_UNSPECIFIED)$/

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s

/** Image types by file extension, for http(s) image links. */
const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif'
}

/** Schema keys Gemini's (OpenAPI-style) Schema object accepts; others (`$schema`, `additionalProperties`, ...) are refused. */
const SCHEMA_KEYS: ReadonlySet<string> = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required',
  'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering',
  'default', 'items', 'minimum', 'maximum'
])

/** String formats Gemini accepts (others fail the request). */
const FORMATS: ReadonlySet<string> = new Set(['enum', 'date-time', 'int32', 'int64', 'float', 'double'])

type Part = Record<string, unknown>
interface Content { role: 'user' | 'model', parts: Part[] }

/**
 * A JSON schema reduced to what Gemini's Schema accepts: unknown keywords dropped, `const` as a
 * one-value enum, a `["x", "null"]` type as `x` with `nullable`, unsupported formats dropped.
 */
function geminiSchema (schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(geminiSchema)
  if (!isRecord(schema)) return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_KEYS.has(key)) continue
    if (key === 'properties' && isRecord(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, prop]) => [name, geminiSchema(prop)]))
    } else if (key === 'items' || key === 'anyOf') {
      out[key] = geminiSchema(value)
    } else if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((type): type is string => typeof type === 'string' && type !== 'null')
      if (types.length === 1) out.type = types[0]
      else if (types.length > 1) out.anyOf = types.map((type) => ({ type }))
      if (types.length < value.length) out.nullable = true
    } else if (key === 'format') {
      if (typeof value === 'string' && FORMATS.has(value)) out.format = value
    } else {
      out[key] = value
    }
  }
  if (schema.const !== undefined && out.enum === undefined) out.enum = [schema.const]
  return out
}

/** A part from a data: URL (inline bytes), or undefined when `url` is not one. */
function inlinePart (url: string): Part | undefined {
  const data = DATA_URL.exec(url)
  return data === null ? undefined : { inlineData: { mimeType: data[1]!, data: data[2]! } }
}

/** An OpenAI `image_url` as inline data (data: URL) or file data (http(s) link, type guessed from its extension). */
function imagePart (part: JsonRecord): Part | undefined {
  const image = part.image_url
  const url = isRecord(image) ? str(image.url) : str(image)
  if (url === undefined || url === '') return undefined
  const inline = inlinePart(url)
  if (inline !== undefined) return inline
  if (!/^https?:\/\//i.test(url)) return undefined
  const ext = /\.([a-z0-9]+)$/i.exec(url.split(/[?#]/)[0] ?? '')?.[1]?.toLowerCase()
  return { fileData: { mimeType: (ext === undefined ? undefined : IMAGE_TYPES[ext]) ?? 'image/*', fileUri: url } }
}

/** Text, image, audio and file parts of an OpenAI message's content (a string or a list of parts). */
function contentParts (content: unknown): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }]
  const parts: Part[] = []
  for (const part of list(content)) {
    if (typeof part === 'string') {
      if (part !== '') parts.push({ text: part })
      continue
    }
    if (!isRecord(part)) continue
    const type = str(part.type)
    let converted: Part | undefined
    if (type === 'text' || type === 'input_text') {
      const text = str(part.text) ?? ''
      if (text !== '') converted = { text }
    } else if (type === 'image_url') {
      converted = imagePart(part)
    } else if (type === 'input_audio' && isRecord(part.input_audio)) {
      const data = str(part.input_audio.data)
      const format = str(part.input_audio.format) ?? 'wav'
      if (data !== undefined) converted = { inlineData: { mimeType: `audio/${format}`, data } }
    } else if (type === 'file' && isRecord(part.file)) {
      converted = inlinePart(str(part.file.file_data) ?? '')
    }
    if (converted !== undefined) parts.push(converted)
  }
  return parts
}

/** The thought signature an earlier answer gave a tool call (see convertGeminiChat), if any. */
function signatureOf (call: JsonRecord): string | undefined {
  const signature = str(at(call, 'extra_content', 'google', 'thought_signature'))
  return signature === undefined || signature === '' ? undefined : signature
}

/** Whether `model` is a Gemini 3 or later model (which checks function calls' thought signatures). */
function checksSignatures (model: string): boolean {
  const version = /^(?:models\/)?gemini-(\d+)/.exec(model)?.[1]
  return version !== undefined && Number(version) >= 3
}

/** A tool message's `response` object: its content as JSON when it is an object, else `{content}`. */
function toolResponse (content: unknown): JsonRecord {
  const text = contentText(content)
  const parsed = parseJson(text)
  if (isRecord(parsed)) return parsed
  return { content: parsed !== undefined && typeof parsed !== 'string' ? parsed : text }
}

const hasFunctionResponse = (content: Content): boolean => content.parts.some((part) => part.functionResponse !== undefined)

/**
 * OpenAI messages as Gemini's `systemInstruction` and `contents`: system and developer messages
 * join the system instruction; user turns stay `user`, assistant turns become `model` (tool
 * calls as functionCall parts); tool results become functionResponse parts of a `user` turn,
 * named after the call they answer. Consecutive turns of one role are merged (function
 * responses only with function responses).
 */
function convertMessages (messages: readonly unknown[], model: string): { system: Part[], contents: Content[] } {
  const system: Part[] = []
  const contents: Content[] = []
  /** Function names by tool call id, as the assistant turns so far named them. */
  const names = new Map<string, string>()
  const signatures = checksSignatures(model)
  for (const message of messages) {
    if (!isRecord(message)) continue
    const role = str(message.role)
    let converted: Content | undefined
    if (role === 'system' || role === 'developer') {
      const text = contentText(message.content)
      if (text !== '') system.push({ text })
      continue
    } else if (role === 'user') {
      converted = { role: 'user', parts: contentParts(message.content) }
    } else if (role === 'assistant') {
      const parts = contentParts(message.content)
      let first = true
      for (const call of list(message.tool_calls)) {
        if (!isRecord(call) || !isRecord(call.function)) continue
        const name = str(call.function.name)
        if (name === undefined) continue
        const id = str(call.id)
        if (id !== undefined) names.set(id, name)
        const args = parseJson(str(call.function.arguments) ?? '')
        const part: Part = { functionCall: { name, args: isRecord(args) ? args : {} } }
        const signature = signatureOf(call) ?? (signatures && first ? SKIP_THOUGHT_SIGNATURE : undefined)
        if (signature !== undefined) part.thoughtSignature = signature
        parts.push(part)
        first = false
      }
      converted = { role: 'model', parts }
    } else if (role === 'tool' || role === 'function') {
      const id = str(message.tool_call_id)
      const name = (id === undefined ? undefined : names.get(id)) ?? str(message.name) ?? ''
      converted = { role: 'user', parts: [{ functionResponse: { name, response: toolResponse(message.content) } }] }
    }
    if (converted === undefined || converted.parts.length === 0) continue
    const last = contents.at(-1)
    if (last !== undefined && last.role === converted.role && hasFunctionResponse(last) === hasFunctionResponse(converted)) {
      last.parts.push(...converted.parts)
    } else {
      contents.push(converted)
    }
  }
  return { system, contents }
}

/** OpenAI function tools as one Gemini tool of function declarations. */
function convertTools (tools: unknown): JsonRecord[] {
  const declarations: JsonRecord[] = []
  for (const tool of list(tools)) {
    if (!isRecord(tool) || !isRecord(tool.function)) continue
    const fn = tool.function
    const name = str(fn.name)
    if (name === undefined) continue
    const declaration: Record<string, unknown> = { name }
    const description = str(fn.description)
    if (description !== undefined) declaration.description = description
    // An object without properties is refused: a function without parameters has none.
    if (isRecord(fn.parameters) && !(isRecord(fn.parameters.properties) && Object.keys(fn.parameters.properties).length === 0)) {
      declaration.parameters = geminiSchema(fn.parameters)
    }
    declarations.push(declaration)
  }
  return declarations.length === 0 ? [] : [{ functionDeclarations: declarations }]
}

/** OpenAI `tool_choice` as Gemini's `toolConfig`. */
function convertToolChoice (choice: unknown): JsonRecord | undefined {
  let config: JsonRecord | undefined
  if (choice === 'auto') config = { mode: 'AUTO' }
  else if (choice === 'none') config = { mode: 'NONE' }
  else if (choice === 'required') config = { mode: 'ANY' }
  else if (isRecord(choice) && isRecord(choice.function)) {
    const name = str(choice.function.name)
    if (name !== undefined) config = { mode: 'ANY', allowedFunctionNames: [name] }
  }
  return config === undefined ? undefined : { functionCallingConfig: config }
}

/** Gemini's `generationConfig` of an OpenAI request's sampling, length, format and reasoning fields. */
function generationConfig (body: JsonRecord): Record<string, unknown> {
  const config: Record<string, unknown> = {}
  const temperature = num(body.temperature)
  if (temperature !== undefined) config.temperature = temperature
  const topP = num(body.top_p)
  if (topP !== undefined) config.topP = topP
  const topK = num(body.top_k)
  if (topK !== undefined) config.topK = topK
  const maxTokens = num(body.max_completion_tokens) ?? num(body.max_tokens)
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens
  const stop = typeof body.stop === 'string' ? [body.stop] : list(body.stop).filter((s): s is string => typeof s === 'string')
  const stopSequences = stop.filter((s) => s !== '').slice(0, MAX_STOP_SEQUENCES)
  if (stopSequences.length > 0) config.stopSequences = stopSequences
  const n = num(body.n)
  if (n !== undefined && n > 1) config.candidateCount = n
  const presence = num(body.presence_penalty)
  if (presence !== undefined) config.presencePenalty = presence
  const frequency = num(body.frequency_penalty)
  if (frequency !== undefined) config.frequencyPenalty = frequency
  const seed = num(body.seed)
  if (seed !== undefined) config.seed = seed
  const format = isRecord(body.response_format) ? body.response_format : undefined
  if (format?.type === 'json_object' || format?.type === 'json_schema') {
    config.responseMimeType = 'application/json'
    const schema = at(format, 'json_schema', 'schema')
    if (format.type === 'json_schema' && isRecord(schema)) config.responseSchema = geminiSchema(schema)
  }
  const effort = str(body.reasoning_effort)
  const budget = effort === undefined ? undefined : GEMINI_EFFORT_BUDGET[effort]
  if (budget !== undefined) config.thinkingConfig = { thinkingBudget: budget, includeThoughts: true }
  return config
}

/**
 * The channel's default `safetySettings`, when it sets one: a list under `safety_settings` (or
 * `safetySettings`) of its setting, or of `other` as JSON; or one threshold (`BLOCK_NONE`, `OFF`,
 * ...) as `other` or the setting's `safety_threshold`, applied to every harm category.
 */
function channelSafetySettings (channel: ChannelConfig): unknown[] | undefined {
  const other = parseJson(channel.other)
  for (const source of [channel.setting, isRecord(other) ? other : {}]) {
    const settings = source.safety_settings ?? source.safetySettings
    if (Array.isArray(settings)) return settings
  }
  const threshold = str(channel.setting.safety_threshold) ?? channel.other.trim()
  if (THRESHOLD.test(threshold)) return HARM_CATEGORIES.map((category) => ({ category, threshold }))
  return undefined
}

/**
 * An OpenAI chat completion request as a Gemini generateContent request. Mapped: messages
 * (system and developer as the system instruction; text, images as data: or http(s) URLs, audio
 * and data: URL files; tool calls and tool results), tools (schemas reduced to what Gemini
 * accepts) and tool_choice, temperature, top_p, top_k, max_tokens / max_completion_tokens, stop,
 * n, presence and frequency penalties, seed, response_format (JSON, with its schema) and
 * reasoning_effort (a thinking budget, thoughts included in the answer). The channel's default
 * safety settings are added when it has some. The model goes in the URL, not the body.
 */
export function geminiChatBody (channel: ChannelConfig, req: RelayRequest): Record<string, unknown> {
  const body = req.body
  if (body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'a chat request needs a JSON body')
  const { system, contents } = convertMessages(list(body.messages), req.model)
  const out: Record<string, unknown> = { contents }
  if (system.length > 0) out.systemInstruction = { parts: system }
  const tools = convertTools(body.tools)
  if (tools.length > 0) {
    out.tools = tools
    const choice = convertToolChoice(body.tool_choice)
    if (choice !== undefined) out.toolConfig = choice
  }
  const config = generationConfig(body)
  if (Object.keys(config).length > 0) out.generationConfig = config
  const safety = channelSafetySettings(channel)
  if (safety !== undefined) out.safetySettings = safety
  return out
}

/**
 * A Gemini client's own generateContent body, sent as written (the model is in the URL); the
 * channel's default safety settings are added only when the client sent none.
 */
export function geminiPassThroughBody (channel: ChannelConfig, req: RelayRequest): Record<string, unknown> {
  if (req.body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'a generateContent request needs a JSON body')
  const out: Record<string, unknown> = { ...req.body }
  const safety = channelSafetySettings(channel)
  if (safety !== undefined && out.safetySettings === undefined) out.safetySettings = safety
  return out
}
