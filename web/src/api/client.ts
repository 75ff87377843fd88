import type { StatusData } from '@modelgate/contracts'

/** A console API failure, carrying the server's message. */
export class ApiError extends Error {
  readonly status: number

  constructor (message: string, status: number) {
    super(message)
    this.status = status
  }
}

/** Calls a console API path and unwraps `{success, message, data}`. */
export async function apiGet<T> (path: string): Promise<T> {
  const res = await fetch(path, { credentials: 'same-origin', headers: { accept: 'application/json' } })
  const body = await res.json().catch(() => undefined) as { success?: boolean, message?: string, data?: T } | undefined
  if (!res.ok || body?.success !== true) throw new ApiError(body?.message ?? res.statusText, res.status)
  return body.data as T
}

export const api = {
  status: async () => await apiGet<StatusData>('/api/status')
}
