/** Anthropic's error envelope: what `/v1/messages` answers on failure (and sends as an `error` event in a stream). */
interface AnthropicErrorBody {
  type: 'error'
  error: {
    /** invalid_request_error, authentication_error, ..., api_error, overloaded_error. */
    type: string
    message: string
  }
}

/**
 * Anthropic's error type for an HTTP status: 400 invalid_request_error, 401
 * authentication_error, 402 billing_error, 403 permission_error, 404 not_found_error, 413
 * request_too_large, 429 rate_limit_error, 500 api_error, 503 and 529 overloaded_error, 504
 * timeout_error; any other 4xx invalid_request_error (as Anthropic documents), anything else
 * api_error.
 */
export function anthropicErrorType (status: number): string {
  switch (status) {
    case 400: return 'invalid_request_error'
    case 401: return 'authentication_error'
    case 402: return 'billing_error'
    case 403: return 'permission_error'
    case 404: return 'not_found_error'
    case 413: return 'request_too_large'
    case 429: return 'rate_limit_error'
    case 503:
    case 529: return 'overloaded_error'
    case 504: return 'timeout_error'
    default: return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error'
  }
}

/** An Anthropic error body for an HTTP status and a message safe to show the client. */
export function anthropicError (status: number, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(status), message } }
}
