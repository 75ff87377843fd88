import type { RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { contentText, isRecord, list, str, type JsonRecord } from '../core/json.js'

/** OpenAI chat fields Hunyuan reads under another name. */
const RENAMED: Readonly<Record<string, string>> = { temperature: 'Temperature', top_p: 'TopP', seed: 'Seed' }

/** Whether a content part is an image. */
const imagePart = (part: unknown): boolean => isRecord(part) && part.type === 'image_url'

/** Hunyuan's `Contents` of a content with images: text and image_url parts. */
function contents (content: readonly unknown[]): JsonRecord[] {
  const out: JsonRecord[] = []
  for (const part of content) {
    if (typeof part === 'string') out.push({ Type: 'text', Text: part })
    else if (!isRecord(part)) continue
    else if (part.type === 'text') out.push({ Type: 'text', Text: str(part.text) ?? '' })
    else if (part.type === 'image_url') {
      const url = isRecord(part.image_url) ? str(part.image_url.url) : str(part.image_url)
      if (url !== undefined) out.push({ Type: 'image_url', ImageUrl: { Url: url } })
    }
  }
  return out
}

/** One OpenAI message as a Hunyuan Message: Role, Content (or Contents with images), ToolCalls, ToolCallId. */
function message (value: unknown): JsonRecord | undefined {
  if (!isRecord(value)) return undefined
  const role = value.role === 'developer' ? 'system' : str(value.role) ?? 'user'
  const out: Record<string, unknown> = { Role: role }
  const parts = list(value.content)
  if (parts.some(imagePart)) out.Contents = contents(parts)
  else out.Content = contentText(value.content)
  const calls = list(value.tool_calls).filter(isRecord).map((call) => {
    const fn = isRecord(call.function) ? call.function : {}
    return { Id: str(call.id) ?? '', Type: 'function', Function: { Name: str(fn.name) ?? '', Arguments: str(fn.arguments) ?? JSON.stringify(fn.arguments ?? {}) } }
  })
  if (calls.length > 0) out.ToolCalls = calls
  const callId = str(value.tool_call_id)
  if (callId !== undefined) out.ToolCallId = callId
  return out
}

/** An OpenAI function tool as a Hunyuan Tool (its JSON schema as a JSON string). */
function tool (value: unknown): JsonRecord | undefined {
  if (!isRecord(value) || !isRecord(value.function)) return undefined
  const fn = value.function
  const out: Record<string, unknown> = { Name: str(fn.name) ?? '', Parameters: JSON.stringify(fn.parameters ?? { type: 'object', properties: {} }) }
  const description = str(fn.description)
  if (description !== undefined) out.Description = description
  return { Type: 'function', Function: out }
}

/**
 * Hunyuan's ToolChoice (`none`, `auto`, or `custom` with CustomTool) of OpenAI's `tool_choice`:
 * a named function is `custom`; `required`, which Hunyuan lacks, is `custom` when there is one
 * tool, else `auto`.
 */
function toolChoice (choice: unknown, tools: readonly JsonRecord[]): JsonRecord {
  if (choice === 'none' || choice === 'auto') return { ToolChoice: choice }
  const named = isRecord(choice) && isRecord(choice.function) ? str(choice.function.name) : undefined
  const custom = named !== undefined
    ? tools.find((t) => isRecord(t.Function) && t.Function.Name === named)
    : choice === 'required' && tools.length === 1 ? tools[0] : undefined
  return custom === undefined ? { ToolChoice: 'auto' } : { ToolChoice: 'custom', CustomTool: custom }
}

/**
 * A Hunyuan ChatCompletions body for an OpenAI chat request: Model, Messages (images as
 * Contents, tool calls and results), Stream, Temperature, TopP, Seed, Stop, Tools and
 * ToolChoice. Fields of the client's body written in Hunyuan's own capitalised form
 * (EnableEnhancement, SearchInfo, StreamModeration, ...) pass through; OpenAI fields Hunyuan has
 * no equivalent for (max_tokens, n, ...) are dropped.
 */
export function hunyuanChatBody (req: RelayRequest): JsonRecord {
  const body = req.body
  if (body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'a chat request needs a body')
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) if (/^[A-Z]/.test(key)) out[key] = value
  out.Model = req.model
  out.Messages = list(body.messages).map(message).filter((m) => m !== undefined)
  out.Stream = req.stream
  for (const [from, to] of Object.entries(RENAMED)) if (typeof body[from] === 'number') out[to] = body[from]
  if (typeof body.stop === 'string') out.Stop = [body.stop]
  else if (Array.isArray(body.stop)) out.Stop = body.stop
  const tools = list(body.tools).map(tool).filter((t) => t !== undefined)
  if (tools.length > 0) {
    out.Tools = tools
    if (body.tool_choice !== undefined) Object.assign(out, toolChoice(body.tool_choice, tools))
  }
  return out
}

/** A GetEmbedding body: one text as Input, several as InputList. Token-id inputs are refused. */
export function hunyuanEmbeddingsBody (req: RelayRequest): JsonRecord {
  const input = req.body?.input
  if (typeof input === 'string') return { Input: input }
  const texts = list(input)
  if (texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
    throw new ProviderError(PROVIDER_ERROR_CODES.unsupported, 'Tencent embeddings take text input (a string or a list of strings)')
  }
  return { InputList: texts }
}
