import type { ClassifiedFailure } from '../core/adaptor.js'
import { isRecord, num, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'

/**
 * FastGPT error names (`statusText`) that condemn the channel: a key that is invalid, deleted or
 * over its limit, an app that is gone or not the key's, a team without points or quota, a model
 * the team may not use.
 */
const DISABLE: ReadonlySet<string> = new Set([
  'unAuthorization', 'unAuthApiKey', 'openapiUnExist', 'openapiUnAuth', 'openapiExceedLimit',
  'unAuthApp', 'appUnExist', 'unExist', 'insufficientQuota', 'aiPointsNotEnough', 'unAuthModel'
])

/** The same by FastGPT's numeric codes (403 unauthorized, 510 quota, 511 model, 514 API key; 502000+ app errors, 506000+ API key errors). */
function disablingCode (code: number | undefined): boolean {
  if (code === undefined) return false
  return code === 403 || code === 510 || code === 511 || code === 514 || (code >= 502000 && code < 503000) || (code >= 506000 && code < 507000)
}

/**
 * Classifies a non-2xx FastGPT answer (`{code, statusText, message, data}`; current versions send
 * every error with HTTP 500): the key, app, team or model errors above disable the channel
 * whatever the status; `tooManyRequest`, 408, 429 and other 5xx retry; 401 and 403 disable; other
 * 4xx are the client's.
 */
export function classifyFastGPTFailure (status: number, body: string): ClassifiedFailure {
  const failure = classifyOpenAIFailure(status, body)
  const json = parseJson(body)
  const statusText = isRecord(json) ? str(json.statusText) ?? '' : ''
  const code = isRecord(json) ? num(json.code) : undefined
  if (statusText !== '') failure.code = statusText
  if (DISABLE.has(statusText) || disablingCode(code) || status === 401 || status === 403) failure.action = 'disable'
  else if (statusText === 'tooManyRequest' || status === 408 || status === 429 || status >= 500) failure.action = 'retry'
  else failure.action = 'client'
  return failure
}
