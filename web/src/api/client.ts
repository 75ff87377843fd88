import i18n from '../i18n'
import { storedUser } from './session'

/** A console API failure, carrying the message to show (already in the user's language). */
export class ApiError extends Error {
  readonly status: number
  /** The refusal's `data`: machine-readable flags such as `require_verification` or `require_2fa_setup`. */
  readonly data: unknown

  constructor (message: string, status: number, data?: unknown) {
    super(message)
    this.status = status
    this.data = data
  }
}

/** The server asks for a fresh secure verification (password or 2FA code) before this call: see components/VerifyDialog. */
export function isVerificationRequired (err: unknown): boolean {
  return err instanceof ApiError && err.status === 403 && (err.data as { require_verification?: unknown } | undefined)?.require_verification === true
}

/** The server refuses every call of an admin without 2FA while the super admin requires it (TwoFactorRequiredForAdmins). */
export function isTwoFactorSetupRequired (err: unknown): boolean {
  return err instanceof ApiError && err.status === 403 && (err.data as { require_2fa_setup?: unknown } | undefined)?.require_2fa_setup === true
}

/** `{success, message, data}`, plus the extra top-level fields some answers carry (url, time, ...). */
export type Envelope<T> = { success: boolean, message: string, data?: T } & Record<string, unknown>

export type Query = Record<string, string | number | boolean | undefined | null>

let unauthorizedHandler: () => void = () => {}
let setupRequiredHandler: () => void = () => {}

/** Called once by the shell: what a 401 does (forget the user, go to /login?expired=true). */
export function onUnauthorized (handler: () => void): void {
  unauthorizedHandler = handler
}

/** Called once by the shell: what a 403 asking an admin to set up 2FA first does (open the setup screen). */
export function onTwoFactorSetupRequired (handler: () => void): void {
  setupRequiredHandler = handler
}

export function withQuery (path: string, query?: Query): string {
  if (query === undefined) return path
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v))
  const text = params.toString()
  return text === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${text}`
}

/** The message the console shows for an HTTP failure without a message of its own. */
function httpMessage (status: number, serverMessage: string | undefined): string {
  if (status === 429) return i18n.t('error.tooManyRequests')
  if (status >= 500) return i18n.t('error.internal')
  if (status === 405) return i18n.t('error.demo')
  return serverMessage !== undefined && serverMessage !== '' ? serverMessage : i18n.t('error.generic', { message: String(status) })
}

/**
 * Calls a console API path and returns the whole envelope. Adds `New-Api-User` (the console's
 * CSRF proof); a 401 signs the user out of the console. `success: false` is thrown as an ApiError.
 */
export async function requestEnvelope<T> (method: string, path: string, opts: { query?: Query, body?: unknown } = {}): Promise<Envelope<T>> {
  const headers: Record<string, string> = { accept: 'application/json' }
  const user = storedUser()
  if (user !== undefined) headers['new-api-user'] = String(user.id)
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(withQuery(path, opts.query), {
      method,
      credentials: 'same-origin',
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body)
    })
  } catch {
    throw new ApiError(i18n.t('error.network'), 0)
  }
  const body = await res.json().catch(() => undefined) as Envelope<T> | undefined
  if (res.status === 401) {
    unauthorizedHandler()
    throw new ApiError(body?.message ?? i18n.t('error.expired'), 401)
  }
  if (!res.ok) {
    const err = new ApiError(httpMessage(res.status, body?.message), res.status, body?.data)
    if (isTwoFactorSetupRequired(err)) setupRequiredHandler()
    throw err
  }
  if (body === undefined) throw new ApiError(i18n.t('error.generic', { message: res.statusText }), res.status)
  if (body.success !== true) throw new ApiError(body.message, res.status)
  return body
}

/** Like {@link requestEnvelope}, returning `data`. */
export async function request<T> (method: string, path: string, opts: { query?: Query, body?: unknown } = {}): Promise<T> {
  return (await requestEnvelope<T>(method, path, opts)).data as T
}

export const get = async <T>(path: string, query?: Query) => await request<T>('GET', path, { query })
export const post = async <T>(path: string, body?: unknown, query?: Query) => await request<T>('POST', path, { body: body ?? {}, query })
export const put = async <T>(path: string, body?: unknown, query?: Query) => await request<T>('PUT', path, { body: body ?? {}, query })
export const del = async <T>(path: string, query?: Query) => await request<T>('DELETE', path, { query })

/** A page of a list endpoint. */
export interface Page<T> { items: T[], page: number, page_size: number, total: number }

/**
 * GETs a file (a CSV export) with the console's headers; its bytes and the name the server gives
 * it. Failures are thrown like {@link request}'s (a 401 signs the user out).
 */
export async function getFile (path: string, query?: Query): Promise<{ blob: Blob, fileName: string | undefined }> {
  const headers: Record<string, string> = {}
  const user = storedUser()
  if (user !== undefined) headers['new-api-user'] = String(user.id)
  let res: Response
  try {
    res = await fetch(withQuery(path, query), { credentials: 'same-origin', headers })
  } catch {
    throw new ApiError(i18n.t('error.network'), 0)
  }
  if (!res.ok || (res.headers.get('content-type') ?? '').startsWith('application/json')) {
    const body = await res.json().catch(() => undefined) as Envelope<unknown> | undefined
    if (res.status === 401) unauthorizedHandler()
    throw new ApiError(res.ok ? (body?.message ?? res.statusText) : httpMessage(res.status, body?.message), res.status)
  }
  const fileName = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1]
  return { blob: await res.blob(), fileName }
}
