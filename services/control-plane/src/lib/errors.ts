import type { Msg } from './i18n.js'

/**
 * A console API failure. `status` 200 is a business refusal (`{success:false}` with HTTP 200, as
 * console clients of peer gateways expect); 400 malformed input; 401 not logged in (the console
 * goes to /login?expired=true); 403 insufficient role; 429 rate limited.
 */
export class ApiError extends Error {
  readonly status: number
  readonly msg: Msg
  readonly vars: Record<string, string | number>
  /** Response headers of the refusal (Retry-After on a 429). */
  readonly headers: Record<string, string> | undefined
  /** The envelope's `data` on the refusal: a machine-readable flag the console acts on (e.g. `require_verification`). */
  readonly data: Record<string, unknown> | undefined

  constructor (status: number, msg: Msg, vars: Record<string, string | number> = {}, headers?: Record<string, string>, data?: Record<string, unknown>) {
    super(msg.en)
    this.status = status
    this.msg = msg
    this.vars = vars
    this.headers = headers
    this.data = data
  }
}

export const fail = (msg: Msg, vars?: Record<string, string | number>) => new ApiError(200, msg, vars)
export const badRequest = (msg: Msg, vars?: Record<string, string | number>) => new ApiError(400, msg, vars)
export const unauthorized = (msg: Msg) => new ApiError(401, msg)
export const forbidden = (msg: Msg, vars?: Record<string, string | number>) => new ApiError(403, msg, vars)

/** A successful answer. */
export function ok<T> (data: T, message = ''): { success: true, message: string, data: T } {
  return { success: true, message, data }
}
