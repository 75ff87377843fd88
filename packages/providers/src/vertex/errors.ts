import type { ClassifiedFailure } from '../core/adaptor.js'
import { classifyClaudeFailure } from '../claude/index.js'
import { classifyGeminiFailure } from '../gemini/index.js'
import { isRecord, parseJson } from '../core/json.js'

/**
 * Classifies a non-2xx Vertex AI answer. Vertex answers in Google's envelope (`{error: {code,
 * message, status, details}}`, sometimes inside a one-element array) for its own refusals (token,
 * permission, quota, unknown model) and for Gemini's; Claude's errors come in Anthropic's envelope
 * (`{type: 'error', error: {type, message}}`). Each is classified as its own adaptor does:
 * UNAUTHENTICATED and PERMISSION_DENIED disable the channel, RESOURCE_EXHAUSTED, overloaded and
 * 5xx retry, INVALID_ARGUMENT, NOT_FOUND and invalid_request_error are the client's.
 */
export function classifyVertexFailure (status: number, body: string): ClassifiedFailure {
  const json = parseJson(body)
  const first: unknown = Array.isArray(json) ? json[0] : json
  if (isRecord(first) && first.type === 'error' && isRecord(first.error)) return classifyClaudeFailure(status, body)
  return classifyGeminiFailure(status, Array.isArray(json) && isRecord(first) ? JSON.stringify(first) : body)
}
