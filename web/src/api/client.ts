import i18n from '../i18n'
import { storedUser } from './session'

/** A console API failure, carrying the message to show (already in the user's language). */
export class ApiError extends Error {
  readonly status: number

  constructor (message: string, status: number) {
    super(message)
    this.status = status
  }
}

/** `{success, message, data}`, plus the extra top-level fields some answers carry (url, time, ...). */
export type Envelope<T> = { success: boolean, message: string, data?: T } & Record<string, unknown>

export type Query = Record<string, string | number | boolean | undefined | null>

let unauthorizedHandler: () => void = () => {}

/** Called once by the shell: what a 401 does (forget the user, go to /login?expired=true). */
export function onUnauthorized (handler: () => void): void {
  unauthorizedHandler = handler
}

export function withQuery (path: string, query?: Query): string {
  if (query === undefined) return path
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v))
  const text = params.toString()
  return text === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${text}`
}

/** The message SPEC.md section 8 gives an HTTP failure. */
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
  if (!res.ok) throw new ApiError(httpMessage(res.status, body?.message), res.status)
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
