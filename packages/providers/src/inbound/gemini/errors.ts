/** Google's error envelope: what the Gemini API answers on failure (and sends inside a stream). */
interface GeminiErrorBody {
  error: {
    /** The HTTP status. */
    code: number
    message: string
    /** The canonical status name: INVALID_ARGUMENT, UNAUTHENTICATED, ..., INTERNAL, UNAVAILABLE. */
    status: string
  }
}

/**
 * Google's canonical status name for an HTTP status: 400 INVALID_ARGUMENT, 401 UNAUTHENTICATED,
 * 402 and 429 RESOURCE_EXHAUSTED (quota), 403 PERMISSION_DENIED, 404 NOT_FOUND, 409 ABORTED,
 * 499 CANCELLED, 500 INTERNAL, 501 UNIMPLEMENTED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED; any
 * other 4xx INVALID_ARGUMENT, anything else INTERNAL.
 */
function geminiStatus (status: number): string {
  switch (status) {
    case 400: return 'INVALID_ARGUMENT'
    case 401: return 'UNAUTHENTICATED'
    case 402:
    case 429: return 'RESOURCE_EXHAUSTED'
    case 403: return 'PERMISSION_DENIED'
    case 404: return 'NOT_FOUND'
    case 409: return 'ABORTED'
    case 499: return 'CANCELLED'
    case 501: return 'UNIMPLEMENTED'
    case 503: return 'UNAVAILABLE'
    case 504: return 'DEADLINE_EXCEEDED'
    default: return status >= 400 && status < 500 ? 'INVALID_ARGUMENT' : 'INTERNAL'
  }
}

/** A Google error body for an HTTP status and a message safe to show the client. */
export function geminiError (status: number, message: string): GeminiErrorBody {
  return { error: { code: status, message, status: geminiStatus(status) } }
}
