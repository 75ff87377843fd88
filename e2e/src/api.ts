import { type APIRequestContext, type Page, request } from 'playwright-core'
import type { Test } from 'tap'

/** What every console API answer looks like. */
export interface Envelope<T = unknown> { success: boolean, message: string, data: T }

/** A fresh API client (no cookies yet) with messages in English, disposed at teardown. */
export async function apiContext (t: Test, baseURL: string): Promise<APIRequestContext> {
  const ctx = await request.newContext({ baseURL, extraHTTPHeaders: { 'accept-language': 'en' } })
  t.teardown(() => ctx.dispose())
  return ctx
}

/** POST /api/user/login through `ctx` (which keeps the session cookie); the answer as it comes. */
export async function login (ctx: APIRequestContext, username: string, password: string): Promise<Envelope<{ id: number }>> {
  return await (await ctx.post('/api/user/login', { data: { username, password } })).json() as Envelope<{ id: number }>
}

export interface ApiSession {
  id: number
  /** The answer's data; throws with the server's message when it does not succeed. */
  call: <T = unknown>(method: string, path: string, data?: unknown) => Promise<T>
  /** The whole answer, for asserting a refusal. */
  send: <T = unknown>(method: string, path: string, data?: unknown) => Promise<Envelope<T>>
  /** Stores options one by one, as the settings screens do. */
  setOptions: (options: Record<string, string>) => Promise<void>
}

/** The console API as a signed-in user outside the browser (cookie plus New-Api-User), as the console calls it. */
export async function apiSession (t: Test, baseURL: string, username: string, password: string): Promise<ApiSession> {
  const ctx = await apiContext(t, baseURL)
  const answer = await login(ctx, username, password)
  if (!answer.success) throw new Error(`login as ${username} failed: ${answer.message}`)
  const id = answer.data.id
  const send = async <T = unknown>(method: string, path: string, data?: unknown): Promise<Envelope<T>> =>
    await (await ctx.fetch(path, { method, data, headers: { 'new-api-user': String(id) } })).json() as Envelope<T>
  const call = async <T = unknown>(method: string, path: string, data?: unknown): Promise<T> => {
    const body = await send<T>(method, path, data)
    if (!body.success) throw new Error(`${method} ${path}: ${body.message}`)
    return body.data
  }
  return {
    id,
    call,
    send,
    setOptions: async (options) => {
      for (const [key, value] of Object.entries(options)) {
        // A credential option needs a fresh secure verification, as the console asks for it: the password.
        const first = await send<{ require_verification?: boolean }>('PUT', '/api/option/', { key, value })
        if (first.data?.require_verification === true) await call('POST', '/api/verify', { method: 'password', value: password })
        if (!first.success) await call('PUT', '/api/option/', { key, value })
      }
    }
  }
}

/** A call made through a signed-in page, with its cookie and the console's New-Api-User header; the answer's data. */
export async function pageCall<T = unknown> (page: Page, userId: number, method: 'get' | 'post' | 'put' | 'delete', path: string, data?: unknown): Promise<T> {
  const res = await page.request[method](path, { data, headers: { 'new-api-user': String(userId) } })
  const body = await res.json() as Envelope<T>
  if (!body.success) throw new Error(`${method} ${path} failed: ${body.message}`)
  return body.data
}
