import type { ClassifiedFailure, FailureAction } from '../core/adaptor.js'
import { isRecord, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'

/**
 * Dify's error codes (`{code, message, status}`) by what they mean for the channel: the app's
 * model provider has no credentials or no quota left, the app is broken, deleted or of another
 * mode than the channel says, or the key is refused: every request would fail alike, so the
 * channel is disabled. The model call failing or a rate limit: another channel may answer.
 */
const ACTIONS: Readonly<Record<string, FailureAction>> = {
  unauthorized: 'disable',
  provider_not_initialize: 'disable',
  provider_quota_exceeded: 'disable',
  app_unavailable: 'disable',
  app_not_found: 'disable',
  not_chat_app: 'disable',
  not_completion_app: 'disable',
  not_workflow_app: 'disable',
  completion_request_error: 'retry',
  too_many_requests: 'retry',
  rate_limit_error: 'retry',
  internal_server_error: 'retry',
  invalid_param: 'client',
  bad_request: 'client',
  model_currently_not_support: 'client',
  conversation_completed: 'client'
}

/**
 * Classifies a non-2xx Dify answer by its `code` (see ACTIONS), else by status: 401 and 403
 * disable the channel, 408, 429 and 5xx retry, other 4xx are the client's. The message is
 * Dify's, with links and key-like strings removed.
 */
export function classifyDifyFailure (status: number, body: string): ClassifiedFailure {
  const failure = classifyOpenAIFailure(status, body)
  const json = parseJson(body)
  const code = isRecord(json) ? str(json.code) : undefined
  const known = code === undefined ? undefined : ACTIONS[code]
  if (known !== undefined) failure.action = known
  else if (status === 401 || status === 403) failure.action = 'disable'
  else if (status === 408 || status === 429 || status >= 500) failure.action = 'retry'
  else failure.action = 'client'
  return failure
}
