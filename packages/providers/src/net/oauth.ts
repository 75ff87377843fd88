import { createHash } from 'node:crypto'
import type { ChannelConfig, CredentialStore, CredentialUpdate } from '../core/adaptor.js'
import { cachedToken, CredentialError, exchange, malformedKey, TOKEN_RENEW_MARGIN_MS, type Token } from './credentials.js'
import { cleanUpstreamMessage } from '../core/failure-text.js'
import { isRecord, num, parseJson, str, type JsonRecord } from '../core/json.js'

// OAuth credentials of a subscription account (Claude Code, Codex): an access token, and a
// refresh token that renews it. Shared by the channel types that sign in as a subscription's CLI.

/** A subscription account's credentials, as a channel holds them. */
export interface OAuthCredentials {
  accessToken?: string
  refreshToken?: string
  /** When `accessToken` stops working (epoch milliseconds); undefined when not known. */
  expiresAt?: number
  /** Every field of the source, flattened (`account_id`, `id_token`, ...). */
  fields: JsonRecord
}

/** What a token endpoint granted. */
interface TokenGrant {
  accessToken: string
  /** A new refresh token, when the endpoint rotates them. */
  refreshToken?: string
  /** Epoch milliseconds. */
  expiresAt: number
  /** The answer's other fields (`id_token`, ...). */
  fields: JsonRecord
}

/** How one provider renews an access token. */
export interface OAuthRefresher {
  /** Separates providers and token endpoints in the caches (a provider name and the token URL). */
  scope: string
  /** Exchanges `refreshToken` for new tokens; throws a CredentialError when refused. */
  refresh: (refreshToken: string) => Promise<TokenGrant>
}

/** Where the CLIs nest their tokens in the credential files they write (Claude Code, Codex). */
const WRAPPERS = ['claudeAiOauth', 'tokens'] as const

/** A timestamp as epoch milliseconds: seconds or milliseconds since the epoch (as a number or digits), or an ISO date. */
export function epochMs (value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : num(value)
  if (n !== undefined) return n > 0 ? (n < 1e11 ? n * 1000 : n) : undefined
  if (typeof value !== 'string' || value.trim() === '') return undefined
  const parsed = Date.parse(value)
  return Number.isNaN(parsed) ? undefined : parsed
}

function nonEmpty (value: unknown): string | undefined {
  const s = str(value)?.trim()
  return s === undefined || s === '' ? undefined : s
}

/** The first of `names` that `record` holds as a non-empty string. */
export function field (record: JsonRecord, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = nonEmpty(record[name])
    if (value !== undefined) return value
  }
  return undefined
}

/** The credential fields of a JSON object, with the CLIs' nesting (`claudeAiOauth`, `tokens`) flattened. */
function flatten (record: JsonRecord): JsonRecord {
  let out: Record<string, unknown> = { ...record }
  for (const wrapper of WRAPPERS) {
    const inner = record[wrapper]
    if (isRecord(inner)) out = { ...out, ...inner }
  }
  return out
}

/**
 * A channel's OAuth credentials. The key field holds either a JSON object (snake_case
 * `access_token`, `refresh_token`, `expires_at`, camelCase too, or the CLI's credential file as
 * is), which is then the whole credential, or a bare access token; with a bare key, the
 * `setting` JSON's fields (`access_token`, `refresh_token`, `expires_at`, ...) complete it, its
 * `access_token` taking the key's place when it has one. `expires_at` may be epoch seconds,
 * milliseconds or an ISO date. Throws a `disable` CredentialError when neither an access nor a
 * refresh token is found.
 */
export function readOAuthCredentials (channel: ChannelConfig): OAuthCredentials {
  const key = channel.key.trim()
  let fields: JsonRecord
  if (key.startsWith('{')) {
    const parsed = parseJson(key)
    if (!isRecord(parsed)) throw malformedKey('the key is neither an access token nor a JSON object of OAuth credentials')
    fields = flatten(parsed)
  } else {
    fields = { ...(key === '' ? {} : { access_token: key }), ...flatten(channel.setting) }
  }
  const credentials: OAuthCredentials = { fields }
  const accessToken = field(fields, 'access_token', 'accessToken')
  const refreshToken = field(fields, 'refresh_token', 'refreshToken')
  const expiresAt = epochMs(fields.expires_at ?? fields.expiresAt)
  if (accessToken !== undefined) credentials.accessToken = accessToken
  if (refreshToken !== undefined) credentials.refreshToken = refreshToken
  if (expiresAt !== undefined) credentials.expiresAt = expiresAt
  if (accessToken === undefined && refreshToken === undefined) throw malformedKey('the credentials hold neither an access token nor a refresh token')
  return credentials
}

/** The channel's `setting.token_url` when it is an http(s) URL, else `fallback`. */
export function tokenUrl (channel: ChannelConfig, fallback: string): string {
  const url = nonEmpty(channel.setting.token_url)
  return url !== undefined && /^https?:\/\//i.test(url) ? url : fallback
}

/**
 * The claims of a JWT: its middle part, base64url JSON. Not verified (the gateway only reads its
 * own token's expiry and account), so no signature library is involved.
 */
export function jwtClaims (token: string | undefined): JsonRecord | undefined {
  const parts = token?.split('.')
  if (parts?.length !== 3) return undefined
  const claims = parseJson(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8'))
  return isRecord(claims) ? claims : undefined
}

/** An access token's lifetime when the endpoint says nothing and the token is not a JWT. */
const DEFAULT_LIFETIME_MS = 60 * 60_000

/**
 * Reads a token endpoint's answer: `access_token` (required), `refresh_token`, and the expiry
 * from `expires_in` (seconds), else the access token's own `exp` claim, else an hour.
 */
function readGrant (body: string): TokenGrant {
  const json = parseJson(body)
  const accessToken = isRecord(json) ? field(json, 'access_token') : undefined
  if (!isRecord(json) || accessToken === undefined) {
    throw new CredentialError({ action: 'retry', message: 'the OAuth token endpoint answered without an access token' }, 502)
  }
  const expiresIn = num(json.expires_in) ?? num(Number(str(json.expires_in)))
  const exp = num(jwtClaims(accessToken)?.exp)
  const expiresAt = expiresIn !== undefined ? Date.now() + expiresIn * 1000 : exp !== undefined ? exp * 1000 : Date.now() + DEFAULT_LIFETIME_MS
  const grant: TokenGrant = { accessToken, expiresAt, fields: json }
  const refreshToken = field(json, 'refresh_token')
  if (refreshToken !== undefined) grant.refreshToken = refreshToken
  return grant
}

/** A token endpoint's refusal as a message without secrets: the OAuth `error` code and its description. */
function describeRefusal (status: number, body: string): string {
  const json = parseJson(body)
  let detail = ''
  if (isRecord(json)) {
    const error = json.error
    const code = isRecord(error) ? str(error.code) ?? str(error.type) : str(error)
    const text = str(json.error_description) ?? (isRecord(error) ? str(error.message) : undefined)
    detail = [code, text].filter((s) => s !== undefined && s !== '').join(': ')
  }
  detail = cleanUpstreamMessage(detail)
  return `the OAuth token endpoint refused to renew the access token (HTTP ${status}${detail === '' ? '' : `: ${detail}`})`
}

/**
 * POSTs a JSON refresh request to `url` through the channel's proxy and reads the grant. A 4xx
 * refusal (an expired, revoked or already used refresh token) is a `disable` CredentialError; an
 * unreachable endpoint or a 5xx a `retry` one.
 */
export async function postRefresh (channel: ChannelConfig, url: string, body: Record<string, unknown>): Promise<TokenGrant> {
  const answer = await exchange(channel, {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body)
  }, describeRefusal)
  return readGrant(answer.body)
}

/** Refresh tokens kept at most (one per account in practice); the oldest is dropped past it. */
const MAX_ROTATED = 4096
/**
 * The newest refresh token of each account whose endpoint rotated it, by a hash of the scope and
 * the refresh token the channel holds, for channels without a shared store (ChannelConfig
 * credentials: unit tests, a process alone). Providers invalidate a refresh token once it is
 * used: the rotated token lives here, in this process only.
 */
const rotated = new Map<string, string>()

function rotationId (scope: string, refreshToken: string): string {
  return createHash('sha256').update('oauth-rotation\0').update(scope).update('\0').update(refreshToken).digest('base64url')
}

/** A pair as the shared store holds it: the newest tokens of one account. */
interface Pair {
  accessToken?: string
  refreshToken: string
  /** Epoch milliseconds; undefined when not known. */
  expiresAt?: number
}

/** How long a renewal may hold the lock: the token request's timeout (30 s) and the writes after it. */
const RENEWAL_LOCK_TTL_MS = 45_000
/** How long a request waits for a renewal another process is making before it gives up (a `retry`). */
const RENEWAL_WAIT_MS = 35_000
/** How often a waiting request looks at the store. */
const RENEWAL_POLL_MS = 50
/** Store entries followed from a channel's refresh token to the newest (a channel reloads after each renewal, so one or two). */
const MAX_HOPS = 64

/**
 * The store id of the renewal of `refreshToken` for channel `channelId`: a hash, never the secret.
 * Its entry holds the pair that renewal granted, so stale copies of a channel's credentials
 * (a replica that has not reloaded, a row written back late) lead to the newest pair.
 */
function pairId (scope: string, channelId: number, refreshToken: string): string {
  return createHash('sha256').update('oauth-pair\0').update(scope).update('\0').update(String(channelId)).update('\0').update(refreshToken).digest('base64url')
}

function readPair (text: string | undefined): Pair | undefined {
  const json = text === undefined ? undefined : parseJson(text)
  if (!isRecord(json)) return undefined
  const refreshToken = field(json, 'refresh_token')
  if (refreshToken === undefined) return undefined
  const pair: Pair = { refreshToken }
  const accessToken = field(json, 'access_token')
  const expiresAt = num(json.expires_at)
  if (accessToken !== undefined) pair.accessToken = accessToken
  if (expiresAt !== undefined) pair.expiresAt = expiresAt
  return pair
}

/** Whether `pair`'s access token may be sent now (more than the renewal margin left). */
function fresh (pair: Pair): pair is Pair & { accessToken: string, expiresAt: number } {
  return pair.accessToken !== undefined && pair.expiresAt !== undefined && pair.expiresAt - TOKEN_RENEW_MARGIN_MS > Date.now()
}

function unreachable (err: unknown): CredentialError {
  return new CredentialError({ action: 'retry', message: `the shared credential store failed: ${(err as Error).message}` }, 503)
}

const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

/** Writes `tokens` into `target` (a copy), with the names and expiry format it already uses. */
function putTokens (target: JsonRecord, tokens: Pair, grantFields: JsonRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { ...target }
  const camel = 'accessToken' in target || 'refreshToken' in target || 'expiresAt' in target
  out[camel ? 'accessToken' : 'access_token'] = tokens.accessToken
  out[camel ? 'refreshToken' : 'refresh_token'] = tokens.refreshToken
  if (tokens.expiresAt !== undefined) {
    // Claude Code's file: milliseconds; a snake_case field keeps its form (ISO or seconds).
    const held = target.expires_at
    out[camel ? 'expiresAt' : 'expires_at'] = camel
      ? tokens.expiresAt
      : typeof held === 'string' && !/^\d+(\.\d+)?$/.test(held.trim()) ? new Date(tokens.expiresAt).toISOString() : Math.floor(tokens.expiresAt / 1000)
  }
  const idToken = str(grantFields.id_token)
  if (idToken !== undefined && 'id_token' in target) out.id_token = idToken
  return out
}

/** `record` with the renewed tokens where it holds one of `replaced` (top level or a CLI wrapper); undefined otherwise. */
function renewedRecord (record: JsonRecord, replaced: ReadonlySet<string>, tokens: Pair, grantFields: JsonRecord): Record<string, unknown> | undefined {
  for (const wrapper of WRAPPERS) {
    const inner = record[wrapper]
    const held = isRecord(inner) ? field(inner, 'refresh_token', 'refreshToken') : undefined
    if (isRecord(inner) && held !== undefined && replaced.has(held)) {
      const out: Record<string, unknown> = { ...record, [wrapper]: putTokens(inner, tokens, grantFields) }
      // Codex's auth.json says when it last renewed.
      if ('last_refresh' in record) out.last_refresh = new Date().toISOString()
      return out
    }
  }
  const held = field(record, 'refresh_token', 'refreshToken')
  return held !== undefined && replaced.has(held) ? putTokens(record, tokens, grantFields) : undefined
}

/** The channel's credentials after a renewal that replaced the refresh tokens `replaced` (see readOAuthCredentials for the forms). */
function credentialUpdate (replaced: ReadonlySet<string>, tokens: Pair, grantFields: JsonRecord): CredentialUpdate {
  return {
    key: (credential) => {
      const text = credential.trim()
      if (!text.startsWith('{')) return undefined
      const parsed = parseJson(text)
      const out = isRecord(parsed) ? renewedRecord(parsed, replaced, tokens, grantFields) : undefined
      // One line: a channel's key holds one credential per line.
      return out === undefined ? undefined : JSON.stringify(out)
    },
    setting: (setting) => renewedRecord(setting, replaced, tokens, grantFields)
  }
}

/** Distinguishes the in-process caches of different stores (two gateways in one process behave as two replicas). */
const storeTags = new WeakMap<CredentialStore, number>()
let storeCount = 0
function storeTag (store: CredentialStore): number {
  let tag = storeTags.get(store)
  if (tag === undefined) storeTags.set(store, tag = ++storeCount)
  return tag
}

/**
 * The newest pair from `start`: the store's entry for a refresh token holds what its renewal
 * granted (a pair with another refresh token: follow it), or a newer access token for the same
 * refresh token (non-rotating endpoints). Also returns the refresh tokens passed on the way.
 */
async function newest (store: CredentialStore, scope: string, channelId: number, start: Pair): Promise<{ head: Pair, passed: string[] }> {
  let head = start
  const passed: string[] = []
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const entry = readPair(await store.get(pairId(scope, channelId, head.refreshToken)))
    if (entry === undefined) break
    if (entry.refreshToken === head.refreshToken) {
      if (entry.accessToken !== undefined && (head.expiresAt === undefined || (entry.expiresAt ?? 0) > head.expiresAt)) head = entry
      break
    }
    passed.push(head.refreshToken)
    head = entry
  }
  return { head, passed }
}

/**
 * Renews through the shared store: the newest pair any process stored wins over the channel's
 * own; when it needs renewing, the holder of the lock of its refresh token renews it, stores the
 * grant under that refresh token (and under the new one), writes it into the channel's record
 * (store.save) and releases; the others wait, reading the store, and use what it stored. As with
 * requests waiting in one process (cachedToken), a pair granted while a request waited is used
 * while it has not expired, even inside the renewal margin.
 */
async function sharedAccessToken (store: CredentialStore, channelId: number, start: Pair, refresher: OAuthRefresher): Promise<Token> {
  const { scope } = refresher
  const replaced = new Set<string>()
  const deadline = Date.now() + RENEWAL_WAIT_MS
  const walk = async (from: Pair): Promise<Pair> => {
    try {
      const found = await newest(store, scope, channelId, from)
      for (const r of found.passed) replaced.add(r)
      return found.head
    } catch (err) {
      throw unreachable(err)
    }
  }
  let head = start
  /** The pair found in need of renewal; another access token stored since is one renewed meanwhile. */
  let stale: Pair | undefined
  for (;;) {
    head = await walk(head)
    if (fresh(head)) return { token: head.accessToken, expiresAt: head.expiresAt }
    if (stale !== undefined && head.accessToken !== undefined && head.accessToken !== stale.accessToken && head.expiresAt !== undefined && head.expiresAt > Date.now()) {
      return { token: head.accessToken, expiresAt: head.expiresAt }
    }
    stale ??= head
    const lock = pairId(scope, channelId, head.refreshToken)
    let token: string | undefined
    try {
      token = await store.acquire(lock, RENEWAL_LOCK_TTL_MS)
    } catch (err) {
      throw unreachable(err)
    }
    if (token === undefined) {
      if (Date.now() > deadline) throw new CredentialError({ action: 'retry', message: 'another process is renewing the access token and has not finished' }, 503)
      await sleep(RENEWAL_POLL_MS)
      continue
    }
    try {
      // The previous holder may have finished between the read and the lock.
      const again = await walk(head)
      if (again.accessToken !== head.accessToken || again.refreshToken !== head.refreshToken) continue
      const grant = await refresher.refresh(head.refreshToken)
      const next: Pair = { accessToken: grant.accessToken, refreshToken: grant.refreshToken ?? head.refreshToken, expiresAt: grant.expiresAt }
      const value = JSON.stringify({ access_token: next.accessToken, refresh_token: next.refreshToken, expires_at: next.expiresAt })
      replaced.add(head.refreshToken)
      try {
        await store.set(lock, value)
        if (next.refreshToken !== head.refreshToken) await store.set(pairId(scope, channelId, next.refreshToken), value)
      } catch {
        // The grant is good: this request uses it, and the channel's record (below) keeps it.
      }
      try {
        await store.save?.(channelId, credentialUpdate(replaced, next, grant.fields))
      } catch {
        // The store reports its own failures; the renewed pair is in the store.
      }
      return { token: grant.accessToken, expiresAt: grant.expiresAt }
    } finally {
      await store.release(lock, token).catch(() => {})
    }
  }
}

/**
 * An access token to send now. Without a refresh token: the access token, unless its expiry has
 * passed (then a `disable` CredentialError: nothing expired is ever sent). With one: the held
 * access token while it has more than TOKEN_RENEW_MARGIN_MS left, else a renewed one, obtained
 * once for all concurrent requests (credentials.ts cachedToken) and shared until its own renewal
 * margin; a held access token of unknown expiry is renewed at once rather than trusted.
 *
 * With the channel's shared store (`channel.credentials`), renewals are shared by every process:
 * the newest pair stored by any of them is used, one renews under the store's lock while the
 * others wait for its result, and the renewed pair is written back to the channel (see
 * sharedAccessToken). Without one, a refresh token the endpoint rotates is remembered in this
 * process's memory and used for the next renewal.
 */
export async function oauthAccessToken (credentials: OAuthCredentials, refresher: OAuthRefresher, channel?: Pick<ChannelConfig, 'id' | 'credentials'>): Promise<string> {
  const { accessToken, refreshToken, expiresAt } = credentials
  if (refreshToken === undefined) {
    if (accessToken === undefined) throw malformedKey('the credentials hold no access token')
    if (expiresAt !== undefined && expiresAt <= Date.now()) {
      throw new CredentialError({ action: 'disable', message: 'the access token has expired and the credentials hold no refresh token to renew it' }, 401)
    }
    return accessToken
  }
  const store = channel?.credentials
  if (store !== undefined) {
    const start: Pair = { refreshToken }
    if (accessToken !== undefined) start.accessToken = accessToken
    if (expiresAt !== undefined) start.expiresAt = expiresAt
    return await cachedToken(`${refresher.scope}\0${storeTag(store)}\0${channel!.id}`, refreshToken, async () => {
      if (fresh(start)) return { token: start.accessToken, expiresAt: start.expiresAt }
      return await sharedAccessToken(store, channel!.id, start, refresher)
    })
  }
  const id = rotationId(refresher.scope, refreshToken)
  return await cachedToken(refresher.scope, refreshToken, async () => {
    const latest = rotated.get(id)
    if (latest === undefined && accessToken !== undefined && expiresAt !== undefined && expiresAt - TOKEN_RENEW_MARGIN_MS > Date.now()) {
      return { token: accessToken, expiresAt }
    }
    const used = latest ?? refreshToken
    const grant = await refresher.refresh(used)
    if (grant.refreshToken !== undefined && grant.refreshToken !== used) {
      rotated.delete(id)
      if (rotated.size >= MAX_ROTATED) rotated.delete(rotated.keys().next().value as string)
      rotated.set(id, grant.refreshToken)
    }
    return { token: grant.accessToken, expiresAt: grant.expiresAt }
  })
}
