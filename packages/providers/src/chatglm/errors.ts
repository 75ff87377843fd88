import type { ClassifiedFailure, FailureAction } from '../core/adaptor.js'
import { isRecord, parseJson } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'

/**
 * Zhipu's business codes (`{error: {code, message}}`, codes as strings), which decide over the
 * HTTP status (an account in arrears is refused with 429, like a rate limit): authentication
 * (1000-1004) and account problems (inactive, missing, locked, in arrears, usage or daily limit
 * reached: 1110-1113, 1304, 1308) disable the channel; concurrency and rate limits (1302, 1303,
 * 1305) and network trouble (1234) retry; bad parameters, unknown model and unsafe content
 * (121x, 1261, 1301) are the client's.
 */
const ACTIONS: ReadonlyMap<string, FailureAction> = new Map([
  ['1000', 'disable'], ['1001', 'disable'], ['1002', 'disable'], ['1003', 'disable'], ['1004', 'disable'],
  ['1100', 'disable'], ['1110', 'disable'], ['1111', 'disable'], ['1112', 'disable'], ['1113', 'disable'], ['1120', 'retry'],
  ['1210', 'client'], ['1211', 'client'], ['1212', 'client'], ['1213', 'client'], ['1214', 'client'], ['1215', 'client'],
  ['1220', 'disable'], ['1221', 'client'], ['1222', 'client'], ['1234', 'retry'], ['1261', 'client'],
  ['1301', 'client'], ['1302', 'retry'], ['1303', 'retry'], ['1304', 'disable'], ['1305', 'retry'], ['1308', 'disable']
])

/** Classifies a non-2xx Zhipu answer by its business code, else as OpenAI-compatible upstreams are. */
export function classifyZhipuFailure (status: number, body: string): ClassifiedFailure {
  const failure = classifyOpenAIFailure(status, body)
  const json = parseJson(body)
  const error = isRecord(json) && isRecord(json.error) ? json.error : undefined
  const code = error === undefined ? undefined : typeof error.code === 'number' ? String(error.code) : typeof error.code === 'string' ? error.code : undefined
  const action = code === undefined ? undefined : ACTIONS.get(code)
  if (action !== undefined) failure.action = action
  return failure
}
