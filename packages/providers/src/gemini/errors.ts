import type { ClassifiedFailure } from '../core/adaptor.js'
import { isRecord, list, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'

/** google.rpc.ErrorInfo reasons that condemn the key, whatever the status. */
const KEY_REASONS: ReadonlySet<string> = new Set(['API_KEY_INVALID', 'API_KEY_EXPIRED', 'API_KEY_SERVICE_BLOCKED', 'CONSUMER_SUSPENDED', 'SERVICE_DISABLED'])

const KEY_TEXT = /API key (not valid|expired)|API_KEY_INVALID/i

/** The `reason` of the first google.rpc.ErrorInfo detail, if any. */
function reasonOf (details: unknown): string | undefined {
  for (const detail of list(details)) {
    if (!isRecord(detail)) continue
    const reason = str(detail.reason)
    if (reason !== undefined && reason !== '') return reason
  }
  return undefined
}

/**
 * Classifies a non-2xx Gemini answer (`{error: {code, message, status, details}}`): an invalid,
 * expired or blocked key (400 INVALID_ARGUMENT with reason API_KEY_INVALID, ...), 401, 403
 * PERMISSION_DENIED and FAILED_PRECONDITION (billing required, or the API not offered where the
 * key is used) disable the channel; 429 RESOURCE_EXHAUSTED, 408 and 5xx (INTERNAL, UNAVAILABLE,
 * DEADLINE_EXCEEDED) retry on another channel; other 4xx (INVALID_ARGUMENT, NOT_FOUND) are the
 * client's. The code is the ErrorInfo reason, else Google's status; the message has links and
 * key-like strings removed.
 */
export function classifyGeminiFailure (status: number, body: string): ClassifiedFailure {
  const failure = classifyOpenAIFailure(status, body)
  const json = parseJson(body)
  const error = isRecord(json) && isRecord(json.error) ? json.error : undefined
  if (error === undefined) return failure
  const reason = reasonOf(error.details)
  const rpcStatus = str(error.status)
  const code = reason ?? rpcStatus
  if (code !== undefined && code !== '') failure.code = code
  else delete failure.code
  const badKey = (reason !== undefined && KEY_REASONS.has(reason)) || KEY_TEXT.test(str(error.message) ?? '')
  if (status === 401 || status === 403 || rpcStatus === 'PERMISSION_DENIED' || rpcStatus === 'UNAUTHENTICATED' ||
    (status >= 400 && status < 500 && (badKey || rpcStatus === 'FAILED_PRECONDITION'))) {
    failure.action = 'disable'
  } else if (status === 408 || status === 429 || status >= 500 || rpcStatus === 'RESOURCE_EXHAUSTED') {
    failure.action = 'retry'
  } else {
    failure.action = 'client'
  }
  return failure
}
