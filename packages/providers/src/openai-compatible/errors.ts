import type { ClassifiedFailure, FailureAction } from '../core/adaptor.js'
import { cleanUpstreamMessage, URL_PATTERN } from '../core/failure-text.js'
import { isRecord, list, parseJson, str } from '../core/json.js'
import type { WireError } from './types.js'

/** Error codes and types that mean the account, not the request, is the problem. */
const EXHAUSTED_CODES: ReadonlySet<string> = new Set([
  'insufficient_quota',
  'billing_not_active',
  'billing_hard_limit_reached',
  'account_deactivated',
  'access_terminated',
  'exceeded_current_quota_error',
  'insufficient_balance',
  'arrearage'
])

const EXHAUSTED_TEXT = new RegExp([
  'exceeded your current quota',
  'account (is|has been) (deactivated|suspended|disabled)',
  'organization has been disabled',
  'billing',
  'insufficient (account )?balance',
  'balance is insufficient',
  'credit balance is too low',
  'quota (has been |is )?exhausted'
].join('|'), 'i')

interface ErrorInfo {
  message?: string
  type?: string
  code?: string
}

function codeOf (value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value
  return typeof value === 'number' ? String(value) : undefined
}

/** A string message, or the first validation detail (`{detail: [{loc, msg}]}`, Mistral's 422). */
function messageOf (value: unknown): string | undefined {
  if (typeof value === 'string') return value
  const first = list(isRecord(value) ? value.detail : value)[0]
  if (!isRecord(first)) return undefined
  const msg = str(first.msg)
  if (msg === undefined) return undefined
  const loc = list(first.loc).filter((part) => typeof part === 'string' || typeof part === 'number').join('.')
  return loc === '' ? msg : `${msg} (${loc})`
}

/** `{error: {message, type, code}}`, else the looser shapes of compatible upstreams. */
function readError (body: string): ErrorInfo {
  const json = parseJson(body)
  if (!isRecord(json)) return {}
  const info: ErrorInfo = {}
  const error = json.error
  const source = isRecord(error) ? error : json
  const message = messageOf(source.message) ?? str(error) ?? messageOf(json.detail)
  const type = str(source.type)
  const code = codeOf(source.code)
  if (message !== undefined) info.message = message
  if (type !== undefined) info.type = type
  if (code !== undefined) info.code = code
  return info
}

function accountExhausted (info: ErrorInfo, body: string): boolean {
  const ids = [info.code, info.type].filter((id) => id !== undefined).map((id) => id.toLowerCase())
  if (ids.includes('rate_limit_exceeded')) return false
  if (ids.some((id) => EXHAUSTED_CODES.has(id))) return true
  // Rate-limit messages link to the billing page: match the words, never the links.
  return EXHAUSTED_TEXT.test((info.message ?? body).replace(URL_PATTERN, ' '))
}

function actionFor (status: number, info: ErrorInfo, body: string): FailureAction {
  if (status === 401 || status === 402 || status === 403) return 'disable'
  if (status >= 400 && status < 500 && accountExhausted(info, body)) return 'disable'
  if (status === 408 || status === 429 || status >= 500 || status < 400) return 'retry'
  return 'client'
}

/**
 * Classifies a non-2xx answer of an OpenAI-compatible upstream: 408, 429 and 5xx retry on another
 * channel; 401, 402, 403 and account-exhausted answers (insufficient_quota, inactive billing,
 * deactivated account, zero balance) disable the channel; other 4xx are the client's fault. The
 * message comes from the error envelope, cleaned (cleanUpstreamMessage: links, hosts, addresses
 * and key-like strings removed, 300 characters at most), else it is a generic text naming the status.
 */
export function classifyOpenAIFailure (status: number, body: string): ClassifiedFailure {
  const info = readError(body)
  const message = (info.message === undefined ? '' : cleanUpstreamMessage(info.message)) || `upstream answered HTTP ${status}`
  const code = info.code ?? info.type
  const failure: ClassifiedFailure = { action: actionFor(status, info, body), message }
  if (code !== undefined) failure.code = code
  return failure
}

/**
 * OpenAI's error envelope as a JSON string:
 * `{"error":{"message":…,"type":…,"param":null,"code":…}}`. `code` defaults to null.
 */
export function openAIErrorBody (message: string, type: string, code: string | null = null): string {
  const envelope: WireError = { error: { message, type, param: null, code } }
  return JSON.stringify(envelope)
}
