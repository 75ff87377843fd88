import type { ClassifiedFailure, FailureAction } from '../core/adaptor.js'
import { isRecord, num, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'

/** Spark's error: `{code, message, sid}` (code 0 is success), in an error answer or a 2xx one. */
interface SparkError {
  code: number
  message: string
}

/** What each Spark error code means for the channel, and the HTTP status it stands for. */
const CODES: Readonly<Record<number, { action: FailureAction, status: number }>> = {
  // The request: malformed, bad parameters, refused content, too many tokens.
  10003: { action: 'client', status: 400 },
  10004: { action: 'client', status: 400 },
  10005: { action: 'client', status: 400 },
  10013: { action: 'client', status: 400 },
  10014: { action: 'client', status: 400 },
  10019: { action: 'client', status: 400 },
  10163: { action: 'client', status: 400 },
  10907: { action: 'client', status: 400 },
  // The app: blacklisted, or without the model's authorization or tokens left.
  10015: { action: 'disable', status: 403 },
  10016: { action: 'disable', status: 403 },
  11200: { action: 'disable', status: 403 },
  // Passing: concurrency and rate limits (the daily limit included: the channel works again tomorrow), engine failures.
  10006: { action: 'retry', status: 429 },
  10007: { action: 'retry', status: 429 },
  11201: { action: 'retry', status: 429 },
  11202: { action: 'retry', status: 429 },
  11203: { action: 'retry', status: 429 },
  10008: { action: 'retry', status: 503 },
  10009: { action: 'retry', status: 502 },
  10010: { action: 'retry', status: 502 },
  10011: { action: 'retry', status: 502 },
  10012: { action: 'retry', status: 500 },
  10110: { action: 'retry', status: 503 },
  10222: { action: 'retry', status: 502 }
}

/** Spark's `{code, message}` in a body (text or parsed), when the code is not 0 (success). */
export function readSparkError (body: unknown): SparkError | undefined {
  const json = typeof body === 'string' ? parseJson(body) : body
  if (!isRecord(json)) return undefined
  const raw = str(json.code)
  const code = num(json.code) ?? (raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : undefined)
  if (code === undefined || code === 0) return undefined
  return { code, message: str(json.message) ?? `Spark error ${code}` }
}

/** The HTTP status a Spark error code stands for (an error in a 2xx answer). */
export function sparkErrorStatus (code: number): number {
  return CODES[code]?.status ?? 502
}

/**
 * Classifies a Spark error, in a refused answer or (Spark reports most errors so) in a 2xx one
 * (`{code, message, sid}`): 11200 (the app has no authorization for the model, or no tokens
 * left), 10015 (blacklisted) and 10016 (authorization) disable the channel, as do 401 and 403;
 * concurrency and rate limits (10006, 10007, 11201 daily, 11202 per second, 11203 concurrent),
 * engine failures (10008-10012, 10110, 10222), 429 and 5xx retry on another channel; malformed
 * requests, bad parameters, refused content (10013 input, 10014 output, 10019) and 10907 (too
 * many tokens) are the client's. The code is Spark's; the message has links and key-like strings removed.
 */
export function classifySparkFailure (status: number, body: string): ClassifiedFailure {
  const error = readSparkError(body)
  if (error === undefined) return classifyOpenAIFailure(status, body)
  const failure = classifyOpenAIFailure(status, JSON.stringify({ message: error.message }))
  failure.code = String(error.code)
  const known = CODES[error.code]
  if (known !== undefined) failure.action = known.action
  else if (status === 401 || status === 403) failure.action = 'disable'
  else if (status >= 200 && status < 300) failure.action = 'retry'
  return failure
}
