import type { ClassifiedFailure } from '../core/adaptor.js'
import { isRecord, num, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/errors.js'

/** "3 h 51 min" for a number of seconds. */
function duration (seconds: number): string {
  const minutes = Math.max(1, Math.round(seconds / 60))
  const hours = Math.floor(minutes / 60)
  return hours === 0 ? `${minutes} min` : `${hours} h ${minutes % 60} min`
}

/**
 * Classifies a non-2xx answer of the ChatGPT Codex backend (`{detail: "..."}` or OpenAI's
 * `{error: {type, message, ...}}`): 401 (an invalid or revoked sign-in) and 403 disable the
 * channel, as does `usage_not_included` (the account's plan has no Codex); 429
 * `usage_limit_reached` (the plan's 5-hour or weekly window spent) and other 429s and 5xx retry
 * on another channel: the window resets by itself (`resets_in_seconds`, said in the message), and
 * a disabled channel would wait for an admin; other 400s (an unsupported parameter or model)
 * are the client's.
 */
export function classifyCodexFailure (status: number, body: string): ClassifiedFailure {
  const failure = classifyOpenAIFailure(status, body)
  const json = parseJson(body)
  const error = isRecord(json) && isRecord(json.error) ? json.error : undefined
  if (error === undefined) return failure
  const type = str(error.type) ?? str(error.code)
  if (type === 'usage_not_included') failure.action = 'disable'
  else if (type === 'usage_limit_reached') {
    failure.action = 'retry'
    const reset = num(error.resets_in_seconds)
    if (reset !== undefined) failure.message = `${failure.message} (it resets in ${duration(reset)})`
  }
  return failure
}
