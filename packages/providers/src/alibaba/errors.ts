import type { ClassifiedFailure, FailureAction } from '../core/adaptor.js'
import { isRecord, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'

/** DashScope's error body: `{code, message, request_id}`. */
interface DashScopeError {
  code: string
  message: string
}

/**
 * The action for a DashScope error code, when the code decides it whatever the status: a refused
 * key, an account in arrears or without the model purchased, a free tier used up with "free tier
 * only" set, disable the channel; throttling and internal errors retry on another channel;
 * refused content and bad parameters are the client's.
 */
function actionOfCode (code: string): FailureAction | undefined {
  if (code === 'InvalidApiKey' || code === 'Arrearage' || code.startsWith('AccessDenied') || code.endsWith('FreeTierOnly')) return 'disable'
  if (code.startsWith('Throttling') || code.startsWith('InternalError') || code === 'RequestTimeOut' || code === 'ServiceUnavailable') return 'retry'
  if (code === 'DataInspectionFailed' || code.startsWith('InvalidParameter') || code.startsWith('BadRequest') || code === 'InvalidURL' || code === 'ModelNotFound') return 'client'
  return undefined
}

/**
 * DashScope's error in a body: plain JSON, or the `data:` line of an SSE `event:error` (a stream
 * refused before it started still has the SSE framing).
 */
export function readDashScopeError (body: string): DashScopeError | undefined {
  let json = parseJson(body)
  if (json === undefined) {
    const line = body.split(/\r?\n/).find((l) => l.startsWith('data:'))
    if (line !== undefined) json = parseJson(line.slice('data:'.length))
  }
  if (!isRecord(json)) return undefined
  const code = str(json.code)
  if (code === undefined || code === '') return undefined
  return { code, message: str(json.message) ?? code }
}

/** HTTP status a DashScope error code stands for (for an error found in a 2xx answer or stream). */
export function dashscopeErrorStatus (code: string): number {
  const action = actionOfCode(code)
  if (code === 'InvalidApiKey') return 401
  if (action === 'disable') return 403
  if (code.startsWith('Throttling')) return 429
  if (action === 'retry') return 500
  return 400
}

/**
 * Classifies a refused DashScope answer (`{code, message, request_id}`, JSON or SSE-framed):
 * InvalidApiKey (401), Arrearage (400, an account in arrears), AccessDenied[.Unpurchased] (403)
 * and *.FreeTierOnly disable the channel; Throttling[.RateQuota|.AllocationQuota] (429),
 * InternalError[.Algo] (500), timeouts and 5xx retry; DataInspectionFailed, InvalidParameter,
 * BadRequest.* and other 4xx are the client's. The code is DashScope's; the message has links
 * and key-like strings removed.
 */
export function classifyDashScopeFailure (status: number, body: string): ClassifiedFailure {
  const error = readDashScopeError(body)
  const failure = classifyOpenAIFailure(status, error === undefined ? body : JSON.stringify(error))
  if (error === undefined) return failure
  failure.code = error.code
  failure.action = actionOfCode(error.code) ?? failure.action
  return failure
}
