import type { ConvertedResponse, Usage } from '../core/adaptor.js'
import { at, isRecord, num, parseJson } from '../core/json.js'
import type { Capability } from './types.js'

/**
 * Reads an OpenAI-style `usage` object: chat/completions/embeddings names (prompt_tokens,
 * completion_tokens) or responses/images/audio names (input_tokens, output_tokens). Undefined
 * when it carries no token counts (null, or whisper's `{type: 'duration'}`).
 */
export function readUsage (value: unknown): Usage | undefined {
  if (!isRecord(value)) return undefined
  const total = num(value.total_tokens)
  const completion = num(value.completion_tokens) ?? num(value.output_tokens)
  let prompt = num(value.prompt_tokens) ?? num(value.input_tokens)
  if (prompt === undefined && completion === undefined) {
    if (total === undefined) return undefined
    // Embeddings and rerank upstreams that report only a total: it is all prompt.
    return { promptTokens: total, completionTokens: 0 }
  }
  if (prompt === undefined) prompt = total !== undefined && completion !== undefined ? Math.max(0, total - completion) : 0
  const usage: Usage = { promptTokens: prompt, completionTokens: completion ?? 0 }
  const cached = num(at(value, 'prompt_tokens_details', 'cached_tokens')) ??
    num(at(value, 'input_tokens_details', 'cached_tokens')) ??
    num(value.prompt_cache_hit_tokens)
  if (cached !== undefined) usage.cachedTokens = Math.min(cached, prompt)
  // Chat names the details prompt/completion_tokens_details; the realtime API input/output_token_details.
  const audioIn = num(at(value, 'prompt_tokens_details', 'audio_tokens')) ?? num(at(value, 'input_token_details', 'audio_tokens'))
  const audioOut = num(at(value, 'completion_tokens_details', 'audio_tokens')) ?? num(at(value, 'output_token_details', 'audio_tokens'))
  if (audioIn !== undefined && audioIn > 0) usage.audioPromptTokens = Math.min(audioIn, prompt)
  if (audioOut !== undefined && audioOut > 0) usage.audioCompletionTokens = Math.min(audioOut, usage.completionTokens)
  return usage
}

/**
 * A converter for JSON answers that are forwarded unchanged and only read for usage; `pick`
 * finds the usage in the parsed body.
 */
export function usageConverter (pick: (json: Readonly<Record<string, unknown>>) => Usage | undefined): Capability['convert'] {
  return (_req, status, contentType, body) => {
    const converted: ConvertedResponse = { status, contentType: contentType || 'application/json', body }
    const json = parseJson(body.toString('utf8'))
    const usage = isRecord(json) ? pick(json) : undefined
    if (usage !== undefined) converted.usage = usage
    return converted
  }
}
