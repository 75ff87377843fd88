import type { ClassifiedFailure, FailureAction } from '../core/adaptor.js'
import { isRecord, num, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/errors.js'

/** A failure MiniMax reported in `base_resp`, and the HTTP status it stands for. */
interface BaseRespFailure {
  status: number
  failure: ClassifiedFailure
}

/** What a `base_resp.status_code` means, and the HTTP status it stands for. */
const CODES: Readonly<Record<string, [FailureAction, number]>> = {
  // Unknown error, timeout, rate limit, internal errors, token and connection limits, rate growth: passing.
  1000: ['retry', 500],
  1001: ['retry', 504],
  1002: ['retry', 429],
  1013: ['retry', 500],
  1024: ['retry', 500],
  1033: ['retry', 500],
  1039: ['retry', 429],
  1041: ['retry', 429],
  2045: ['retry', 429],
  // A plan's usage window used up: another channel may serve until it resets.
  2056: ['retry', 429],
  // The model is not in this key's plan: another channel may serve it.
  2061: ['retry', 403],
  // Not authorized, invalid API key.
  1004: ['disable', 401],
  2049: ['disable', 401],
  // Insufficient balance, quota exhausted.
  1008: ['disable', 402],
  1028: ['disable', 402],
  1030: ['disable', 402],
  // Sensitive input or output, invalid characters, invalid parameters.
  1026: ['client', 400],
  1027: ['client', 400],
  1042: ['client', 400],
  1043: ['client', 400],
  2013: ['client', 400]
}

/**
 * The failure a MiniMax `base_resp` reports, or undefined when `status_code` is 0 or absent.
 * Invalid keys (1004, 2049) and an exhausted balance or quota (1008, 1028, 1030) disable the
 * channel; rate, token and connection limits (1002, 1039, 1041, 2045), timeouts and internal
 * errors retry on another channel; sensitive content (1026, 1027) and invalid parameters (2013)
 * are the client's. Unknown codes retry when they are 1xxx (service side), else are the client's.
 */
export function baseRespFailure (baseResp: unknown): BaseRespFailure | undefined {
  if (!isRecord(baseResp)) return undefined
  const code = num(baseResp.status_code)
  if (code === undefined || code === 0) return undefined
  const [action, status] = CODES[String(code)] ?? (code < 2000 ? ['retry', 500] : ['client', 400])
  const message = classifyOpenAIFailure(status, JSON.stringify({ error: { message: str(baseResp.status_msg) ?? '' } })).message
  return { status, failure: { action, message: message === `upstream answered HTTP ${status}` ? `MiniMax error ${code}` : message, code: String(code) } }
}

/**
 * Classifies a non-2xx MiniMax answer: by its `base_resp` code when it has one, else as an
 * OpenAI-compatible upstream's (401/402/403 disable, 429 and 5xx retry, other 4xx the client's).
 */
export function classifyMiniMaxFailure (status: number, body: string): ClassifiedFailure {
  const json = parseJson(body)
  const reported = isRecord(json) ? baseRespFailure(json.base_resp) : undefined
  return reported?.failure ?? classifyOpenAIFailure(status, body)
}
