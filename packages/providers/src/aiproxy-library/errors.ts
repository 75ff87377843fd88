import type { ClassifiedFailure } from '../core/adaptor.js'
import { isRecord, parseJson } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'
import { libraryError } from './response.js'

/** Words of AIProxy's (Chinese or English) messages about a key or an account that cannot pay. */
const ACCOUNT_TEXT = /余额不足|额度不足|欠费|套餐|api ?key (is )?(invalid|incorrect|not found)|invalid api ?key|unauthori[sz]ed|无效的? ?(api ?key|密钥)|密钥(错误|无效)/i

/**
 * Classifies a non-2xx answer of AIProxy's library (`{success: false, errCode, errMsg}`, or
 * OpenAI's envelope from its gateway): 401, 402 and 403, or a message about an invalid key or
 * an exhausted balance, disable the channel; 408, 429 and 5xx retry; other 4xx (a library that
 * does not exist, a bad query) are the client's.
 */
export function classifyLibraryFailure (status: number, body: string): ClassifiedFailure {
  const failure = classifyOpenAIFailure(status, body)
  const json = parseJson(body)
  const error = isRecord(json) ? libraryError(json) : undefined
  if (error !== undefined) {
    failure.code = error.code
    failure.message = classifyOpenAIFailure(status, JSON.stringify({ message: error.message })).message
  }
  const text = error?.message ?? failure.message
  if (status === 401 || status === 402 || status === 403 || (status >= 400 && status < 500 && status !== 429 && ACCOUNT_TEXT.test(text))) failure.action = 'disable'
  else if (status === 408 || status === 429 || status >= 500) failure.action = 'retry'
  else failure.action = 'client'
  return failure
}
