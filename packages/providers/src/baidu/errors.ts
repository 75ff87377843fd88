import type { ChannelConfig, ClassifiedFailure, FailureAction } from '../core/adaptor.js'
import { cleanUpstreamMessage } from '../core/failure-text.js'
import { isRecord, num, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'
import { forgetBaiduToken } from './api.js'

/** A Baidu error: what to do, and the HTTP status it stands for (Baidu answers errors with HTTP 200). */
interface Meaning {
  action: FailureAction
  status: number
}

const RETRY_LIMIT: Meaning = { action: 'retry', status: 429 }
const RETRY_SERVER: Meaning = { action: 'retry', status: 503 }
const DISABLE: Meaning = { action: 'disable', status: 403 }
const CLIENT: Meaning = { action: 'client', status: 400 }

/**
 * Baidu's error codes (Qianfan "错误码"): rate limits and server trouble retry; a channel whose
 * account has no permission, no paid quota left or whose app is gone is disabled; an access token
 * that Baidu calls invalid or expired (110, 111) is dropped from the cache and the request tried
 * again (the retry obtains a new one).
 */
const MEANINGS: ReadonlyMap<number, Meaning> = new Map([
  [1, RETRY_SERVER], // unknown error
  [2, RETRY_SERVER], // service temporarily unavailable
  [3, CLIENT], // unsupported openapi method
  [4, RETRY_LIMIT], // cluster request limit reached
  [6, DISABLE], // no permission to access data
  [13, RETRY_SERVER], // get service token failed
  [14, DISABLE], // IAM certification failed
  [15, DISABLE], // app not exists or create failed
  [17, DISABLE], // daily request limit reached
  [18, RETRY_LIMIT], // QPS limit reached
  [19, DISABLE], // total request limit reached (no paid quota)
  [100, CLIENT], // invalid parameter
  [110, { action: 'retry', status: 401 }], // access token invalid or no longer valid
  [111, { action: 'retry', status: 401 }], // access token expired
  [336000, RETRY_SERVER], // internal error
  [336001, CLIENT], // invalid argument
  [336002, CLIENT], // invalid JSON
  [336003, CLIENT], // invalid parameters
  [336004, DISABLE], // no permission for this model (not activated or not paid)
  [336005, { action: 'client', status: 404 }], // unknown service (model endpoint)
  [336100, RETRY_SERVER], // server high load, try again later
  [336501, RETRY_LIMIT], // requests per minute limit
  [336502, RETRY_LIMIT] // tokens per minute limit
])

/** What an unlisted code means: 3365xx are rate limits, other 336xxx the request's fault. */
function meaningOf (code: number): Meaning {
  const known = MEANINGS.get(code)
  if (known !== undefined) return known
  if (code >= 336500 && code < 336600) return RETRY_LIMIT
  if (code >= 336000 && code < 337000) return CLIENT
  return RETRY_SERVER
}

/** `{error_code, error_msg}` of a Baidu answer, when it is one. */
export function baiduError (json: unknown): { code: number, message: string } | undefined {
  if (!isRecord(json)) return undefined
  const code = num(json.error_code)
  if (code === undefined || code === 0) return undefined
  return { code, message: str(json.error_msg) ?? '' }
}

/**
 * A Baidu error as a refusal: its action, the HTTP status it stands for, and a message naming
 * Baidu's code. With a channel, an access token Baidu no longer accepts (110, 111) is forgotten.
 */
export function baiduFailure (error: { code: number, message: string }, channel?: ChannelConfig): { status: number, failure: ClassifiedFailure } {
  const meaning = meaningOf(error.code)
  if (channel !== undefined && (error.code === 110 || error.code === 111)) forgetBaiduToken(channel)
  const message = error.message.trim() === '' ? `Baidu error ${error.code}` : `${error.message.trim()} (Baidu error ${error.code})`
  return { status: meaning.status, failure: { action: meaning.action, message: cleanUpstreamMessage(message), code: String(error.code) } }
}

/**
 * Classifies a non-2xx answer: Baidu's own `{error_code, error_msg}` by its code, anything else
 * (a gateway's HTML page, an OpenAI-shaped error of a proxy) as OpenAI-compatible upstreams are.
 */
export function classifyBaiduFailure (status: number, body: string): ClassifiedFailure {
  const error = baiduError(parseJson(body))
  return error === undefined ? classifyOpenAIFailure(status, body) : baiduFailure(error).failure
}
