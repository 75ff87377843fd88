import { ROLES } from '@modelgate/contracts'
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { loadControlPlaneConfig } from '@modelgate/config'
import { type User, updateUser } from '@modelgate/db'
import { fastifyOptions } from '@modelgate/service'
import { createServiceEnv } from '@modelgate/testing'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import controlPlane from '../src/app.js'
import { sha256 } from '../src/plugins/app/auth.js'
import { createAccount } from '../src/services/users.js'

/** A control plane on a fresh database and Redis prefix; `env` adds or overrides variables. */
export async function build (t: Test, env: Record<string, string> = {}, shared?: Record<string, string>, logLines?: string[]): Promise<FastifyInstance> {
  const options = fastifyOptions('control-plane', logLines === undefined ? 'silent' : 'info', { trustRequestId: true })
  if (logLines !== undefined) {
    const stream = new Writable({ write (chunk, _encoding, done) { logLines.push(...String(chunk).split('\n').filter((l) => l !== '')); done() } })
    options.logger = { ...(options.logger as object), stream }
  }
  const app = Fastify(options)
  await app.register(controlPlane, { config: loadControlPlaneConfig({ ...(shared ?? await createServiceEnv(t)), ...env }) })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

/** A control plane like `build`'s, logging at info: its log lines (JSON) collect in `lines`. */
export async function buildLogged (t: Test, env: Record<string, string> = {}): Promise<{ app: FastifyInstance, lines: string[] }> {
  const lines: string[] = []
  return { app: await build(t, env, undefined, lines), lines }
}

/** The environment of one control plane, to build several replicas sharing Postgres and Redis. */
export async function sharedEnv (t: Test, env: Record<string, string> = {}): Promise<Record<string, string>> {
  return { ...await createServiceEnv(t), ...env }
}

/** Headers of a signed-in console session: the cookie plus the CSRF header. */
export interface Session {
  user: { id: number, username: string, role: number }
  headers: Record<string, string>
}

export async function login (app: FastifyInstance, username: string, password: string): Promise<Session> {
  const res = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username, password } })
  const body = res.json()
  if (body.success !== true) throw new Error(`login as ${username} failed: ${body.message}`)
  const cookie = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('session='))
  if (cookie === undefined) throw new Error('no session cookie')
  return { user: body.data, headers: { cookie: cookie.split(';')[0]!, 'new-api-user': String(body.data.id) } }
}

export const ROOT = { username: 'root', password: '123456' } as const

/** Creates a user with `role` (default normal) and password `password123`, then signs in. */
export async function userSession (app: FastifyInstance, username: string, role: number = ROLES.common): Promise<Session & { row: User }> {
  const row = await createAccount(app, { username, password: 'password123', role })
  return { ...await login(app, username, 'password123'), row }
}

/**
 * Confirms the session's password through POST /api/verify, as changing a password, an email or
 * a credential option requires (secure verification, five minutes).
 */
export async function verifySession (app: FastifyInstance, headers: Record<string, string>, password = 'password123'): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/api/verify', headers, payload: { method: 'password', value: password } })
  if (res.json().success !== true) throw new Error(`verification failed: ${res.json().message}`)
}

/** A user calling with an access token (new-api's `Authorization` + `New-Api-User`), as API clients do. */
export interface TokenCaller { id: number, headers: Record<string, string> }

/** A new account with a fresh access token (and `group`, when given). */
export async function tokenCaller (app: FastifyInstance, username: string, group?: string): Promise<TokenCaller> {
  const row = await createAccount(app, { username })
  const token = randomBytes(24).toString('base64url')
  await updateUser(app.db, row.id, { access_token_hash: sha256(token), ...(group === undefined ? {} : { group }) })
  return { id: row.id, headers: { authorization: token, 'new-api-user': String(row.id) } }
}

/** POSTs `payload` to `url` as `who`, in English; the status and the parsed answer. */
export async function postAs (app: FastifyInstance, who: TokenCaller, url: string, payload: object) {
  const res = await app.inject({ method: 'POST', url, headers: { ...who.headers, 'accept-language': 'en' }, payload })
  return { status: res.statusCode, body: res.json() }
}
