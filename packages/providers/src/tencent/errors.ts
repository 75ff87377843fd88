import type { ClassifiedFailure, FailureAction } from '../core/adaptor.js'
import { isRecord, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'

/** A Tencent Cloud API error: `Response.Error: {Code, Message}` (answered with HTTP 200). */
interface TencentError {
  code: string
  message: string
}

/** Codes of an account that cannot use Hunyuan: not activated, stopped, in arrears, its resource packs used up. */
const ACCOUNT_CODES: ReadonlySet<string> = new Set([
  'FailedOperation.ServiceNotActivated',
  'FailedOperation.ServiceStop',
  'FailedOperation.ServiceStopArrears',
  'FailedOperation.FreeResourcePackExhausted',
  'FailedOperation.ResourcePackExhausted',
  'UnsupportedOperation.NonWhitelistAccount'
])

/** The error of a Tencent Cloud answer (`{Response: {Error}}`, or the error alone), if it is one. */
export function readTencentError (body: unknown): TencentError | undefined {
  const json = typeof body === 'string' ? parseJson(body) : body
  if (!isRecord(json)) return undefined
  const response = isRecord(json.Response) ? json.Response : json
  const error = response.Error
  if (!isRecord(error)) return undefined
  const code = str(error.Code)
  if (code === undefined || code === '') return undefined
  return { code, message: str(error.Message) ?? code }
}

/** What a Tencent Cloud error code means for the channel, and the HTTP status it stands for. */
export function tencentErrorMeaning (code: string): { action: FailureAction, status: number } {
  if (code.startsWith('AuthFailure')) return { action: 'disable', status: 401 }
  if (ACCOUNT_CODES.has(code) || code.startsWith('ResourceInsufficient.Charge') || code.startsWith('UnauthorizedOperation')) return { action: 'disable', status: 403 }
  if (code.startsWith('LimitExceeded') || code.startsWith('RequestLimitExceeded') || code === 'FailedOperation.EngineServerLimitExceeded') return { action: 'retry', status: 429 }
  if (code.startsWith('InternalError') || code.startsWith('FailedOperation') || code.startsWith('ResourceUnavailable') || code.startsWith('ResourceInsufficient')) {
    return { action: 'retry', status: 503 }
  }
  return { action: 'client', status: 400 }
}

/**
 * Classifies a Tencent Cloud failure, reported with HTTP 200 (`{Response: {Error: {Code,
 * Message}, RequestId}}`) or, rarely, a non-2xx status: AuthFailure.* (a wrong SecretId or
 * signature, an expired timestamp), accounts not activated, stopped, in arrears or out of
 * resource packs, and UnauthorizedOperation.* disable the channel; LimitExceeded,
 * RequestLimitExceeded.*, engine timeouts and errors (FailedOperation.*), InternalError and
 * ResourceUnavailable retry on another channel; InvalidParameter[Value].*, MissingParameter,
 * UnknownParameter and other codes are the client's. Without an error body the status decides.
 */
export function classifyTencentFailure (status: number, body: string): ClassifiedFailure {
  const error = readTencentError(body)
  if (error === undefined) return classifyOpenAIFailure(status, body)
  const failure = classifyOpenAIFailure(status, JSON.stringify({ message: error.message }))
  failure.code = error.code
  failure.action = tencentErrorMeaning(error.code).action
  return failure
}
