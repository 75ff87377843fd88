import type { RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { contentText, isRecord, list, type JsonRecord } from '../core/json.js'

/** one-api's Spark model names (websocket versions) and their HTTP API names, so migrated channels keep working. */
const LEGACY_MODELS: Readonly<Record<string, string>> = {
  'SparkDesk-v1.1': 'lite',
  'SparkDesk-v3.1': 'generalv3',
  'SparkDesk-v3.1-128K': 'pro-128k',
  'SparkDesk-v3.5': 'generalv3.5',
  'SparkDesk-v3.5-32K': 'max-32k',
  'SparkDesk-v4.0': '4.0Ultra'
}

/** The HTTP API's name of `model` (one-api's `SparkDesk-v…` names translated). */
function sparkModel (model: string): string {
  return LEGACY_MODELS[model] ?? model
}

/**
 * The Spark HTTP API's body for an OpenAI chat request: the client's body (unknown fields pass
 * through) with the mapped model (one-api's `SparkDesk-v…` names as the HTTP API's), `stream` as
 * asked, message contents as text (Spark takes text only; `developer` messages as `system`),
 * `max_completion_tokens` as `max_tokens`, and no `stream_options` (Spark reports usage in the
 * last chunk of every stream).
 */
export function sparkChatBody (req: RelayRequest): JsonRecord {
  if (req.body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'a chat request needs a body')
  const body: Record<string, unknown> = { ...req.body, model: sparkModel(req.model), stream: req.stream }
  delete body.stream_options
  if (body.max_tokens === undefined && body.max_completion_tokens !== undefined) body.max_tokens = body.max_completion_tokens
  delete body.max_completion_tokens
  body.messages = list(req.body.messages).map((message) => {
    if (!isRecord(message)) return message
    const out: Record<string, unknown> = { ...message }
    if (out.role === 'developer') out.role = 'system'
    if (Array.isArray(out.content)) out.content = contentText(out.content)
    return out
  })
  return body
}
