import type { ClassifiedFailure } from '../core/adaptor.js'
import { at, isRecord, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'

/**
 * Anthropic's words for an account that cannot spend: workspace or organization spend limits
 * (sent as 400 invalid_request_error), on top of the credit-balance and billing texts that the
 * OpenAI classifier already knows.
 */
const SPEND_LIMIT_TEXT = /(reached|exceeded) your specified api usage limits|spend limit|out of extra usage/i

/**
 * Classifies a non-2xx Anthropic answer (`{type: 'error', error: {type, message}}`):
 * authentication_error (401), permission_error (403), billing_error (402), a too low credit
 * balance and a reached spend limit (a 429 whose `error.details.error_code` is
 * `enforced_spend_limit_reached`, or a 400 saying so) disable the channel; rate_limit_error
 * (429), api_error (500), overloaded_error (529) and other 5xx retry on another channel;
 * invalid_request_error (400), not_found_error (404) and request_too_large (413) are the client's.
 * The code is Anthropic's error type (or its `details.error_code`); the message has links and
 * key-like strings removed.
 */
export function classifyClaudeFailure (status: number, body: string): ClassifiedFailure {
  const failure = classifyOpenAIFailure(status, body)
  const json = parseJson(body)
  const error = isRecord(json) && isRecord(json.error) ? json.error : undefined
  if (error === undefined) return failure
  const type = str(error.type)
  const detail = str(at(error, 'details', 'error_code'))
  if (detail !== undefined && detail !== '') failure.code = detail
  const exhausted = type === 'billing_error' || detail === 'enforced_spend_limit_reached' ||
    (status >= 400 && status < 500 && SPEND_LIMIT_TEXT.test(str(error.message) ?? ''))
  if (exhausted) failure.action = 'disable'
  return failure
}
