// OpenAI's chat and embeddings answers, written by the adaptors of native protocols that report
// their answers in shapes of their own (Alibaba DashScope, iFlytek Spark, Tencent Hunyuan, Dify,
// AIProxy's library, ...).
import type { Usage } from './adaptor.js'
import { isRecord, type JsonRecord } from './json.js'
import { openAIErrorBody } from '../openai-compatible/errors.js'
import { outbox, type KeptText } from './stream-converter.js'
import { textKeeper } from './text-keeper.js'

const DONE = 'data: [DONE]\n\n'

/** OpenAI's error envelope (type `upstream_error`) as one stream event (the OpenAI SDKs raise it as an API error). */
export function errorChunk (message: string, code: string | null): string {
  return `data: ${openAIErrorBody(message, 'upstream_error', code)}\n\n`
}

/**
 * OpenAI's `usage` object of `usage`: the cached prompt tokens under `prompt_tokens_details` when
 * the upstream reports them, the reasoning tokens (a part of the completion) under
 * `completion_tokens_details` when there were any.
 */
export function openAIUsageOf (usage: Usage, reasoningTokens = 0): JsonRecord {
  const out: Record<string, unknown> = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens
  }
  if (usage.cachedTokens !== undefined) out.prompt_tokens_details = { cached_tokens: usage.cachedTokens }
  if (reasoningTokens > 0) out.completion_tokens_details = { reasoning_tokens: reasoningTokens }
  return out
}

/** One tool call of an answer, as OpenAI writes it. */
export interface OpenAIToolCall {
  id: string
  type: 'function'
  function: { name: string, arguments: string }
}

/** What an OpenAI chat completion says, for {@link chatCompletion}. */
interface ChatAnswer {
  id: string
  model: string
  /** Unix seconds (now by default). */
  created?: number
  content: string
  reasoning?: string
  toolCalls?: OpenAIToolCall[]
  finishReason: string
  usage?: JsonRecord
  /** Fields of the upstream's beside OpenAI's (after `choices`). */
  extra?: JsonRecord
}

/**
 * An OpenAI `chat.completion` with one choice: `content` null when the answer is only tool calls,
 * `reasoning_content` when the model reasoned.
 */
export function chatCompletion (answer: ChatAnswer): string {
  const calls = answer.toolCalls ?? []
  const message: Record<string, unknown> = { role: 'assistant', content: answer.content === '' && calls.length > 0 ? null : answer.content }
  if (answer.reasoning !== undefined && answer.reasoning !== '') message.reasoning_content = answer.reasoning
  if (calls.length > 0) message.tool_calls = calls
  const out: Record<string, unknown> = {
    id: answer.id,
    object: 'chat.completion',
    created: answer.created ?? Math.floor(Date.now() / 1000),
    model: answer.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }],
    ...answer.extra
  }
  if (answer.usage !== undefined) out.usage = answer.usage
  return JSON.stringify(out)
}

/** A streamed tool call fragment: the first one of a call names it, later ones add arguments. */
interface ToolCallPiece {
  id?: string
  name?: string
  arguments?: string
}

/**
 * Writes OpenAI `chat.completion.chunk` events for one choice, in order: a role chunk before the
 * first delta, content, `reasoning_content` and tool call deltas, then the finish reason, a usage
 * chunk and `data: [DONE]`. Tool calls are told apart by a key of the upstream's (its call id or
 * index) and numbered in the order they start; each one's first delta carries its id (the
 * upstream's, else `call_<n>`), type and name. Keeps only the calls' keys and the text not taken
 * (its converter's one keeper of text: see {@link ChatChunkWriter.text}).
 */
interface ChatChunkWriter {
  /** The chunks' id and model (used from the next chunk on). */
  head: (id: string, model: string) => void
  /** Whether a chunk has been written (after which the answer can no longer be retried). */
  started: () => boolean
  /** Content; `counted: false` for text the model did not write (references the adaptor appends). */
  content: (text: string, counted?: boolean) => void
  reasoning: (text: string) => void
  toolCall: (key: string, piece: ToolCallPiece) => void
  /** How many tool calls started. */
  toolCalls: () => number
  /** The finish reason, the usage (when known) and `[DONE]`: the stream is finished. */
  finish: (reason: string, usage: JsonRecord | undefined) => void
  /**
   * An OpenAI error event (the upstream failed mid-answer, or refused the request: callers that
   * want a retry elsewhere check started() first); the stream is not finished.
   */
  error: (message: string, code: string) => void
  finished: () => boolean
  /** The bytes written since the last call. */
  flush: () => Buffer
  /** The text written (content, reasoning, tool call arguments) and not yet taken. */
  text: KeptText
}

/** `id` is the chunks' id until head() names another. */
export function chatChunkWriter (model: string, id = 'chatcmpl-'): ChatChunkWriter {
  let head = { id, model }
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…` without its closing brace. */
  let prefix: string | undefined
  const out = outbox()
  let done = false
  const calls = new Map<string, number>()
  const text = textKeeper()

  function chunk (delta: JsonRecord, finish: string | null = null): void {
    if (prefix === undefined) {
      prefix = JSON.stringify({ id: head.id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: head.model }).slice(0, -1)
      out.push(`data: ${prefix},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`)
    }
    out.push(`data: ${prefix},"choices":[{"index":0,"delta":${JSON.stringify(delta)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`)
  }

  return {
    head: (id, name) => {
      if (prefix === undefined) head = { id, model: name }
    },
    started: () => prefix !== undefined,
    content: (value, counted = true) => {
      if (value === '' || done) return
      chunk({ content: value })
      if (counted) text.keep(value)
    },
    reasoning: (value) => {
      if (value === '' || done) return
      chunk({ reasoning_content: value })
      text.keep(value)
    },
    toolCall: (key, piece) => {
      if (done) return
      const args = piece.arguments ?? ''
      let index = calls.get(key)
      if (index === undefined) {
        index = calls.size
        calls.set(key, index)
        const id = piece.id !== undefined && piece.id !== '' ? piece.id : `call_${index + 1}`
        chunk({ tool_calls: [{ index, id, type: 'function', function: { name: piece.name ?? '', arguments: args } }] })
      } else if (args !== '') {
        chunk({ tool_calls: [{ index, function: { arguments: args } }] })
      }
      text.keep(args)
    },
    toolCalls: () => calls.size,
    finish: (reason, usage) => {
      if (done) return
      chunk({}, reason)
      if (usage !== undefined) out.push(`data: ${prefix},"choices":[],"usage":${JSON.stringify(usage)}}\n\n`)
      out.push(DONE)
      done = true
    },
    error: (message, code) => {
      if (done) return
      out.push(errorChunk(message, code))
    },
    finished: () => done,
    flush: out.flush,
    text
  }
}

/**
 * OpenAI's embeddings answer: one `embedding` object per vector, in order, as arrays of numbers or
 * (`encoding_format: 'base64'`, what the official SDKs ask for by default) as the base64 of the
 * little-endian float32 values; usage with the prompt tokens only.
 */
export function embeddingsAnswer (vectors: readonly unknown[], model: string, promptTokens: number | undefined, encodingFormat: unknown): string {
  const base64 = encodingFormat === 'base64'
  const data = vectors.map((vector, index) => ({ object: 'embedding', index, embedding: base64 && Array.isArray(vector) ? float32Base64(vector) : vector }))
  const out: Record<string, unknown> = { object: 'list', data, model }
  if (promptTokens !== undefined) out.usage = { prompt_tokens: promptTokens, total_tokens: promptTokens }
  return JSON.stringify(out)
}

/**
 * A vector as OpenAI's `encoding_format: 'base64'` sends it: the little-endian float32 bytes,
 * base64-encoded (the OpenAI SDKs decode it); a value that is not a number counts as 0.
 */
export function float32Base64 (vector: readonly unknown[]): string {
  const bytes = Buffer.alloc(vector.length * 4)
  vector.forEach((value, i) => bytes.writeFloatLE(typeof value === 'number' ? value : 0, i * 4))
  return bytes.toString('base64')
}

/** The `data` items of an OpenAI embeddings list with their float `embedding` arrays as base64 (float32Base64). */
export function base64Embeddings (data: readonly unknown[]): unknown[] {
  return data.map((item) => (isRecord(item) && Array.isArray(item.embedding) ? { ...item, embedding: float32Base64(item.embedding) } : item))
}
