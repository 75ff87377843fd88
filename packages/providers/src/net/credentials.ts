import { createHash } from 'node:crypto'
import type { ChannelConfig, ClassifiedFailure, FailureAction, UpstreamRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { call, failureMessage } from './probe.js'

/**
 * The channel's credentials could not be turned into what the upstream accepts (an access token
 * exchange refused or unreachable, a key in the wrong form). The relay treats it like an upstream
 * refusal of that status: `disable` for credentials the provider refused, `retry` for an exchange
 * that failed for a passing reason. The message never contains the secret.
 */
export class CredentialError extends ProviderError {
  readonly action: FailureAction
  readonly status: number
  readonly providerCode: string | undefined

  constructor (failure: ClassifiedFailure, status: number) {
    super(PROVIDER_ERROR_CODES.credentials, failure.message)
    this.name = 'CredentialError'
    this.action = failure.action
    this.status = status
    this.providerCode = failure.code
  }

  /** The failure as the relay classifies upstream refusals. */
  failure (): ClassifiedFailure {
    return { action: this.action, message: this.message, ...(this.providerCode === undefined ? {} : { code: this.providerCode }) }
  }
}

/** A key that cannot be read (wrong separator, missing part): refused before any call, and the channel is disabled. */
export function malformedKey (message: string): CredentialError {
  return new CredentialError({ action: 'disable', message }, 401)
}

/** An access token and when it stops working (epoch milliseconds). */
export interface Token {
  token: string
  expiresAt: number
}

interface Entry {
  token?: Token
  pending?: Promise<Token>
}

/** Tokens are renewed this long before they expire, so no request carries one that lapses in flight. */
export const TOKEN_RENEW_MARGIN_MS = 5 * 60_000
/** Tokens kept at most; the oldest is dropped past it (one per channel key in practice). */
const MAX_TOKENS = 4096
const tokens = new Map<string, Entry>()

/** The cache key: a hash of the scope and the secret (the secret itself is never kept). */
function tokenId (scope: string, secret: string): string {
  return createHash('sha256').update(scope).update('\0').update(secret).digest('base64url')
}

/**
 * A token for `secret`, obtained by `obtain` once and shared by every request until
 * {@link TOKEN_RENEW_MARGIN_MS} before its expiry; concurrent requests wait on the same exchange.
 * `scope` separates providers and endpoints (a token URL); only a hash of the secret is kept as
 * the cache key. A failed exchange is not cached: the next request tries again.
 */
export async function cachedToken (scope: string, secret: string, obtain: () => Promise<Token>): Promise<string> {
  const id = tokenId(scope, secret)
  let entry = tokens.get(id)
  if (entry?.token !== undefined && entry.token.expiresAt - TOKEN_RENEW_MARGIN_MS > Date.now()) return entry.token.token
  if (entry?.pending !== undefined) return (await entry.pending).token
  if (entry === undefined) {
    if (tokens.size >= MAX_TOKENS) tokens.delete(tokens.keys().next().value as string)
    entry = {}
    tokens.set(id, entry)
  }
  const current = entry
  const pending = obtain()
  current.pending = pending
  try {
    const token = await pending
    current.token = token
    return token.token
  } finally {
    current.pending = undefined
    if (current.token === undefined) tokens.delete(id)
  }
}

/**
 * Forgets the token cached for `secret` in `scope` (the upstream said it is no longer valid before
 * its announced expiry); the next request obtains a new one. An exchange under way is left alone.
 */
export function forgetToken (scope: string, secret: string): void {
  const id = tokenId(scope, secret)
  const entry = tokens.get(id)
  if (entry === undefined) return
  if (entry.pending === undefined) tokens.delete(id)
  else entry.token = undefined
}

/** Forgets every cached token (tests). */
export function clearTokenCache (): void {
  tokens.clear()
}

/** Largest token answer read. */
const TOKEN_ANSWER_MAX_BYTES = 256 * 1024

/**
 * Sends a token exchange through the channel's proxy. Network failures and 5xx answers become a
 * `retry` CredentialError, 4xx a `disable` one with `describe`'s message; a 2xx answer comes back.
 */
export async function exchange (channel: ChannelConfig, up: UpstreamRequest, describe: (status: number, body: string) => string, timeoutMs = 30_000): Promise<{ status: number, body: string }> {
  let res: { status: number, body: Buffer }
  try {
    res = await call(up, channel, timeoutMs, TOKEN_ANSWER_MAX_BYTES)
  } catch (err) {
    throw new CredentialError({ action: 'retry', message: `access token request failed: ${failureMessage(err, timeoutMs)}` }, 502)
  }
  const body = res.body.toString('utf8')
  if (res.status >= 200 && res.status < 300) return { status: res.status, body }
  const message = describe(res.status, body)
  throw new CredentialError({ action: res.status >= 500 || res.status === 429 ? 'retry' : 'disable', message }, res.status)
}
