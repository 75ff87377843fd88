import type { Usage } from '../adaptor.js'
import type { JsonRecord } from '../json.js'

const DONE = 'data: [DONE]\n\n'

/** OpenAI's `usage` object of a Usage (cached tokens only when the upstream reported them). */
export function openAIUsageOf (usage: Usage): JsonRecord {
  const out: Record<string, unknown> = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens
  }
  if (usage.cachedTokens !== undefined) out.prompt_tokens_details = { cached_tokens: usage.cachedTokens }
  return out
}

/** An OpenAI error envelope as one stream event (the OpenAI SDKs raise it as an API error). */
export function errorChunk (message: string, code: string): string {
  return `data: ${JSON.stringify({ error: { message, type: 'upstream_error', param: null, code } })}\n\n`
}

/** Writes one answer's OpenAI chat.completion.chunk events (a single choice). */
export interface ChunkWriter {
  /** The answer's id, when the upstream names it before the first chunk. */
  name: (id: string) => void
  content: (text: string) => void
  reasoning: (text: string) => void
  /** The finish chunk, a usage chunk when there is usage, and `data: [DONE]`. */
  finish: (reason: string, usage: Usage | undefined) => void
  /** An error event; false (and nothing written) before the first chunk, so the relay may still retry elsewhere. */
  error: (message: string, code: string) => boolean
  /** Whether any chunk was written. */
  started: () => boolean
  /** The bytes written since the last call. */
  flush: () => Buffer
}

const EMPTY = Buffer.alloc(0)

/**
 * A writer of OpenAI chat chunks for converters of text-only streams (Dify apps, AIProxy's
 * library): the role chunk before the first delta, then content and `reasoning_content` deltas,
 * the finish reason, usage and `[DONE]`. Nothing is written before the first delta or the finish.
 */
export function chunkWriter (model: string, idPrefix: string): ChunkWriter {
  let id = ''
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…` without its closing brace. */
  let prefix: string | undefined
  let out: string[] = []

  function chunk (delta: JsonRecord, finish: string | null = null): void {
    if (prefix === undefined) {
      prefix = JSON.stringify({ id: `chatcmpl-${id === '' ? idPrefix : id}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model }).slice(0, -1)
      out.push(`data: ${prefix},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`)
    }
    out.push(`data: ${prefix},"choices":[{"index":0,"delta":${JSON.stringify(delta)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`)
  }

  return {
    name: (value) => { if (id === '' && value !== '') id = value },
    content: (text) => { if (text !== '') chunk({ content: text }) },
    reasoning: (text) => { if (text !== '') chunk({ reasoning_content: text }) },
    finish: (reason, usage) => {
      chunk({}, reason)
      if (usage !== undefined) out.push(`data: ${prefix ?? ''},"choices":[],"usage":${JSON.stringify(openAIUsageOf(usage))}}\n\n`)
      out.push(DONE)
    },
    error: (message, code) => {
      if (prefix === undefined) return false
      out.push(errorChunk(message, code))
      return true
    },
    started: () => prefix !== undefined,
    flush: () => {
      if (out.length === 0) return EMPTY
      const bytes = Buffer.from(out.length === 1 ? out[0]! : out.join(''))
      out = []
      return bytes
    }
  }
}

/** A complete OpenAI chat.completion of one answer. */
export function chatCompletion (fields: { id: string, model: string, created?: number, content: string, reasoning?: string, finish: string, usage?: Usage, extra?: JsonRecord }): string {
  const message: Record<string, unknown> = { role: 'assistant', content: fields.content }
  if (fields.reasoning !== undefined && fields.reasoning !== '') message.reasoning_content = fields.reasoning
  const answer: Record<string, unknown> = {
    id: `chatcmpl-${fields.id}`,
    object: 'chat.completion',
    created: fields.created ?? Math.floor(Date.now() / 1000),
    model: fields.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: fields.finish }],
    ...fields.extra
  }
  if (fields.usage !== undefined) answer.usage = openAIUsageOf(fields.usage)
  return JSON.stringify(answer)
}

/** OpenAI's error envelope, for an upstream that failed inside a 2xx answer. */
export function errorBody (message: string, code: string): string {
  return JSON.stringify({ error: { message, type: 'upstream_error', param: null, code } })
}
