import type { ClassifiedFailure, FailureAction } from '../core/adaptor.js'
import { isRecord, parseJson, str } from '../core/json.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'

/** Error types that condemn the channel's credentials or their permissions. */
const DISABLE: ReadonlySet<string> = new Set([
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'IncompleteSignatureException',
  'ExpiredTokenException',
  'MissingAuthenticationTokenException',
  'InvalidClientTokenId',
  'SignatureDoesNotMatch'
])

/** Error types another channel (or a later try) may not meet. */
const RETRY: ReadonlySet<string> = new Set([
  'ThrottlingException',
  'TooManyRequestsException',
  'ModelNotReadyException',
  'ServiceUnavailableException',
  'ServiceUnavailable',
  'InternalServerException',
  'InternalFailure',
  'ModelTimeoutException',
  'ModelErrorException',
  'ServiceQuotaExceededException'
])

/**
 * An error type from the body (`__type` or `code`, as some AWS answers carry it, with any
 * `namespace#` prefix and `:detail` suffix removed).
 */
function bodyType (json: unknown): string | undefined {
  if (!isRecord(json)) return undefined
  const raw = str(json.__type) ?? str(json.code) ?? str(json.Code)
  if (raw === undefined || raw === '') return undefined
  return raw.slice(raw.lastIndexOf('#') + 1).split(':')[0]
}

/**
 * The error type Bedrock sends in its `x-amzn-ErrorType` header, which the classification does
 * not see: told apart by the status and the message, whose wording AWS keeps stable.
 */
function inferredType (status: number, message: string): string | undefined {
  if (/security token included in the request is expired/i.test(message)) return 'ExpiredTokenException'
  if (/security token included in the request is invalid/i.test(message)) return 'UnrecognizedClientException'
  if (/signature we calculated does not match|signature expired/i.test(message)) return 'InvalidSignatureException'
  if (/missing authentication token/i.test(message)) return 'MissingAuthenticationTokenException'
  switch (status) {
    case 400: return /quota/i.test(message) ? 'ServiceQuotaExceededException' : 'ValidationException'
    case 403: return 'AccessDeniedException'
    case 404: return 'ResourceNotFoundException'
    case 408: return 'ModelTimeoutException'
    case 424: return 'ModelErrorException'
    case 429: return /not ready/i.test(message) ? 'ModelNotReadyException' : 'ThrottlingException'
    case 500: return 'InternalServerException'
    case 503: return 'ServiceUnavailableException'
    default: return undefined
  }
}

function actionFor (status: number, type: string | undefined): FailureAction {
  if (type !== undefined && DISABLE.has(type)) return 'disable'
  if (type !== undefined && RETRY.has(type)) return 'retry'
  if (status === 401 || status === 403) return 'disable'
  if (status === 408 || status === 429 || status >= 500) return 'retry'
  return 'client'
}

/**
 * Classifies a non-2xx Bedrock answer (`{"message": …}`, its type in the `x-amzn-ErrorType`
 * header): refused credentials or permissions (UnrecognizedClientException, InvalidSignatureException,
 * ExpiredTokenException, AccessDeniedException: 403) disable the channel; ThrottlingException
 * and ModelNotReadyException (429), ServiceQuotaExceededException, ModelTimeoutException (408),
 * ModelErrorException (424), InternalServerException (500) and ServiceUnavailableException (503)
 * retry on another channel; ValidationException (400) and ResourceNotFoundException (404) are the
 * client's. The type comes from the body when it names one, else from the status and the
 * message; it is the failure's code. The message has links and key-like strings removed.
 */
export function classifyBedrockFailure (status: number, body: string): ClassifiedFailure {
  const json = parseJson(body)
  const message = isRecord(json) ? str(json.message) ?? str(json.Message) : undefined
  const failure = classifyOpenAIFailure(status, message === undefined ? body : JSON.stringify({ message }))
  const type = bodyType(json) ?? inferredType(status, message ?? '')
  failure.action = actionFor(status, type)
  if (type === undefined) delete failure.code
  else failure.code = type
  return failure
}
