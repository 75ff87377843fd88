import type { ClassifiedFailure } from '../core/adaptor.js'
import { classifyOpenAIFailure } from '../openai-compatible/errors.js'

/** A trial key past its monthly call allowance: it serves nothing until the month ends. */
const TRIAL_EXHAUSTED = /trial key.*(month|monthly)|(month|monthly).*trial key/i

/**
 * Classifies a non-2xx Cohere answer (`{id, message}`): 401 (invalid API token), 402 (payment
 * required), 403, 498 (invalid token) and a trial key past its monthly limit disable the
 * channel; other 429s (rate limits) and 5xx retry on another channel; 400, 404 (unknown model)
 * and 422 are the client's. The message is Cohere's with links and key-like strings removed.
 */
export function classifyCohereFailure (status: number, body: string): ClassifiedFailure {
  const failure = classifyOpenAIFailure(status, body)
  if (status === 498 || (status === 429 && TRIAL_EXHAUSTED.test(failure.message))) failure.action = 'disable'
  return failure
}
