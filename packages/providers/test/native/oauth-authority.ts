// An OAuth token endpoint for the subscription types' fixtures (Claude Code, Codex): it renews
// access tokens for the refresh tokens it knows, once each (a used refresh token is replaced by
// the new one it grants, as Anthropic and OpenAI rotate them), and remembers which access tokens
// are valid until when, so the API side of a fixture can refuse the rest and record any expired
// token that reached it.
import type { ServerResponse } from 'node:http'
import type { Seen } from '../kit.js'

export interface Exchange {
  contentType: string | undefined
  body: Record<string, unknown>
  /** Whether the endpoint granted new tokens. */
  granted: boolean
}

export interface Authority {
  /** Token requests, in order. */
  exchanges: Exchange[]
  /** Expired access tokens that reached the API (must stay empty). */
  expiredSent: string[]
  /** Seconds the next grants live; below the gateway's renewal margin, every request renews. */
  lifetime: number
  /** Milliseconds the endpoint takes to answer (so that concurrent requests overlap). */
  delayMs: number
  /** Answers the next token requests with this status instead (then goes back to normal). */
  failNext: number | undefined
  /** Makes `refreshToken` a live refresh token. */
  live: (refreshToken: string) => void
  /** Records an access token the API accepts until `expiresAt` (epoch ms). */
  allow: (accessToken: string, expiresAt: number) => void
  /** The refresh token granted with the last exchange. */
  lastRefresh: () => string | undefined
  /** The access token granted with the last exchange. */
  lastAccess: () => string | undefined
  /**
   * Whether `token` is valid now; an access token known to have expired is recorded in
   * `expiredSent`.
   */
  check: (token: string | undefined) => boolean
  /** Answers the token request in `seen` (true) when it is one for `path`. */
  serve: (res: ServerResponse, seen: Seen) => boolean
}

export interface AuthorityOptions {
  /** The token endpoint's path. */
  path: string
  /** Checks the request body (client id, grant type, scope); a message when it is wrong. */
  checkBody: (body: Record<string, unknown>) => string | undefined
  /** A new access token (its number, its expiry in epoch seconds). */
  issue: (n: number, exp: number) => string
  /** Extra fields of a grant (id_token, ...). */
  extra?: (access: string) => Record<string, unknown>
  /** Whether grants say `expires_in` (Anthropic) or leave it to the token's `exp` claim (OpenAI). */
  expiresIn: boolean
  /** The refusal of an unknown or used refresh token. */
  refuse: (res: ServerResponse) => void
}

export function authority (options: AuthorityOptions): Authority {
  const refresh = new Set<string>()
  const access = new Map<string, number>()
  let issued = 0
  let last: string | undefined
  let lastToken: string | undefined
  const self: Authority = {
    exchanges: [],
    expiredSent: [],
    lifetime: 3600,
    delayMs: 30,
    failNext: undefined,
    live: (token) => { refresh.add(token) },
    allow: (token, expiresAt) => { access.set(token, expiresAt) },
    lastRefresh: () => last,
    lastAccess: () => lastToken,
    check: (token) => {
      if (token === undefined) return false
      const until = access.get(token)
      if (until === undefined) return false
      if (until <= Date.now()) {
        self.expiredSent.push(token)
        return false
      }
      return true
    },
    serve: (res, seen) => {
      if (seen.method !== 'POST' || seen.url !== options.path) return false
      let body: Record<string, unknown> = {}
      try {
        body = JSON.parse(seen.body.toString('utf8')) as Record<string, unknown>
      } catch {
        // An empty record fails the checks below.
      }
      const exchange: Exchange = { contentType: seen.headers['content-type'], body, granted: false }
      self.exchanges.push(exchange)
      setTimeout(() => {
        if (self.failNext !== undefined) {
          res.writeHead(self.failNext, { 'Content-Type': 'application/json' }).end('{"error":"temporarily_unavailable"}')
          self.failNext = undefined
          return
        }
        const wrong = options.checkBody(body)
        if (wrong !== undefined) {
          res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'invalid_request', error_description: wrong }))
          return
        }
        const used = typeof body.refresh_token === 'string' ? body.refresh_token : ''
        if (!refresh.delete(used)) {
          options.refuse(res)
          return
        }
        issued++
        const exp = Math.floor(Date.now() / 1000) + self.lifetime
        const token = options.issue(issued, exp)
        access.set(token, exp * 1000)
        lastToken = token
        last = `rt-rotated-${issued}-${used}`
        refresh.add(last)
        exchange.granted = true
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({
          token_type: 'Bearer',
          access_token: token,
          refresh_token: last,
          ...(options.expiresIn ? { expires_in: self.lifetime } : {}),
          ...(options.extra?.(token) ?? {})
        }))
      }, self.delayMs)
      return true
    }
  }
  return self
}

/** The bearer token of a request. */
export function bearer (seen: Seen): string | undefined {
  const header = seen.headers.authorization
  return typeof header === 'string' && header.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined
}

/** A JWT with `claims` (signature not checked by anyone here). */
export function jwt (claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.${Buffer.from('not-a-real-signature').toString('base64url')}`
}
