import type { ClassifiedFailure } from '../core/adaptor.js'
import { classifyOpenAIFailure } from '../openai-compatible/errors.js'

/** Jina's codes that condemn the key or the account, whatever the status. */
const ACCOUNT_CODES: ReadonlySet<string> = new Set(['AUTH_MISSING_API_KEY', 'AUTH_INVALID_API_KEY', 'AUTH_INVALID_FORMAT', 'AUTHZ_INSUFFICIENT_BALANCE'])

/**
 * Classifies a non-2xx Jina answer (`{detail}`, with a `code` such as AUTH_INVALID_API_KEY on
 * the newer API): 401, 402 and insufficient balance disable the channel; 429 and 5xx retry on
 * another channel; 400 (unknown model), 422 (validation) and a plan's per-request limit
 * (AUTHZ_RESOURCE_LIMIT_EXCEEDED) are the client's. The message is `detail` (or its first
 * validation error) with links and key-like strings removed.
 */
export function classifyJinaFailure (status: number, body: string): ClassifiedFailure {
  const failure = classifyOpenAIFailure(status, body)
  if (failure.code !== undefined && ACCOUNT_CODES.has(failure.code)) failure.action = 'disable'
  else if (failure.code === 'AUTHZ_RESOURCE_LIMIT_EXCEEDED') failure.action = 'client'
  return failure
}
