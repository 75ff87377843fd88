import { createHash } from 'node:crypto'
import type {
  CustomOAuthDiscoveryBody,
  CustomOAuthDiscoveryResult,
  CustomOAuthProviderView,
  TokenAuthMethodName
} from '@modelgate/contracts'
import { type CustomOAuthProvider, findCustomOAuthLinkOwner, findUserById, upsertCustomOAuthLink } from '@modelgate/db'
import { outboundRefusal } from '@modelgate/providers'
import type { FastifyReply, FastifyRequest } from 'fastify'
import * as client from 'openid-client'
import { COM } from '../lib/custom-oauth-messages.js'
import { ApiError, fail } from '../lib/errors.js'
import { OBM, checkOutbound } from '../lib/outbound.js'
import { OM } from '../lib/oauth-messages.js'
import { keyHint } from './channel-keys.js'
import type { Deps } from './deps.js'
import {
  baseUrl,
  type IdentityLinks,
  isRecord,
  issueState,
  type OAuthIdentity,
  optionalString,
  providerErrorText
} from './oauth.js'

/**
 * OpenID Connect and generic OAuth 2.0 sign-in through providers the super admin adds. The
 * protocol work (PKCE S256, state, nonce, the token request, ID token claims and signature
 * against the issuer's JWKS) is openid-client's; every request it makes goes through the
 * service's outbound guard. Binding, sign-in and sign-up are services/oauth.ts's, as for GitHub.
 */

/** Names the built-in sign-in routes use under /api/oauth and /oauth. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set(['github', 'linuxdo', 'wechat', 'telegram', 'state', 'email'])

const UPSTREAM_TIMEOUT_S = 10
const SUBJECT_MAX = 255
const OIDC_DEFAULT_SCOPES = 'openid profile email'

/**
 * ID token algorithms accepted: the asymmetric ones, verified against the issuer's JWKS. HMAC
 * (keyed with the client secret) and `none` prove nothing about the issuer and are refused.
 */
const ID_TOKEN_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

/** A provider as the console reads it: the secret only as a hint. */
export function providerView (row: CustomOAuthProvider): CustomOAuthProviderView {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    kind: row.kind,
    enabled: row.enabled,
    issuer: row.issuer,
    authorization_endpoint: row.authorization_endpoint,
    token_endpoint: row.token_endpoint,
    user_info_endpoint: row.userinfo_endpoint,
    jwks_url: row.jwks_uri,
    client_id: row.client_id,
    client_secret_hint: row.client_secret_hint,
    client_secret_set: row.client_secret_encrypted !== '',
    token_endpoint_auth_method: row.token_endpoint_auth_method,
    scopes: row.scopes,
    user_id_field: row.user_id_field,
    username_field: row.username_field,
    display_name_field: row.display_name_field,
    email_field: row.email_field,
    auto_register: row.auto_register,
    created_at: row.created_at,
    updated_at: row.updated_at
  }
}

/** What the audit trail records of a provider; the secret as a digest under a name it hides. */
export function providerAudit ({ secrets }: Deps<'secrets'>, row: CustomOAuthProvider): Record<string, unknown> {
  const { client_secret_hint: _hint, client_secret_set: _set, created_at: _c, updated_at: _u, ...fields } = providerView(row)
  let secret: string
  try {
    secret = row.client_secret_encrypted === '' ? '' : secrets.open(row.client_secret_encrypted)
  } catch {
    // Sealed under another CRYPTO_SECRET: the sealed text still tells a change apart.
    secret = row.client_secret_encrypted
  }
  return { ...fields, client_secret: secret === '' ? '' : createHash('sha256').update(secret).digest('hex') }
}

/** A secret sealed for storage, with its hint. */
export function sealSecret ({ secrets }: Deps<'secrets'>, secret: string): { client_secret_encrypted: string, client_secret_hint: string } {
  return { client_secret_encrypted: secrets.seal(secret), client_secret_hint: keyHint(secret) }
}

const ENDPOINT_LABELS = {
  issuer: 'Issuer',
  authorization_endpoint: 'authorization endpoint',
  token_endpoint: 'token endpoint',
  userinfo_endpoint: 'userinfo endpoint',
  jwks_uri: 'JWKS URL'
} as const
type EndpointColumn = keyof typeof ENDPOINT_LABELS

/**
 * Checks a provider as it will be stored: the endpoints its kind needs, each an http(s) address
 * the outbound guard allows (metadata addresses refused, private ones under OUTBOUND_PUBLIC_ONLY),
 * and a client secret.
 */
export async function checkProvider ({ outbound }: Deps<'outbound'>, row: Pick<CustomOAuthProvider, 'kind' | 'client_secret_encrypted' | EndpointColumn>): Promise<void> {
  const required: EndpointColumn[] = row.kind === 'oidc'
    ? ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri']
    : ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint']
  for (const column of required) {
    if (row[column] === '') throw fail(COM.endpointRequired, { field: ENDPOINT_LABELS[column] })
  }
  for (const column of Object.keys(ENDPOINT_LABELS) as EndpointColumn[]) {
    const value = row[column]
    if (value === '') continue
    let url: URL
    try {
      url = new URL(value)
    } catch {
      throw fail(COM.endpointInvalid, { field: ENDPOINT_LABELS[column] })
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fail(COM.endpointInvalid, { field: ENDPOINT_LABELS[column] })
    await checkOutbound(outbound, { url: value })
  }
  if (row.client_secret_encrypted === '') throw fail(COM.secretRequired)
}

/** The provider's bindings: the custom_oauth_links table, its own sign-up switch. */
export function customLinks (row: CustomOAuthProvider): IdentityLinks {
  const bind = async (db: Parameters<typeof upsertCustomOAuthLink>[0], userId: number, subject: string) => { await upsertCustomOAuthLink(db, userId, row.id, subject) }
  return {
    key: `custom:${row.id}`,
    label: row.name,
    // Usernames are at most 12 characters: a short prefix leaves room for the number or suffix.
    usernamePrefix: row.slug.replace(/[^a-z0-9]/g, '').slice(0, 6) || 'oauth',
    signUpAllowed: row.auto_register,
    findOwner: async (db, subject) => await findCustomOAuthLinkOwner(db, row.id, subject),
    bind: async (db, userId, subject) => {
      await bind(db, userId, subject)
      return await findUserById(db, userId)
    },
    addToAccount: (account, subject) => { account.within = async (trx, user) => { await bind(trx, user.id, subject) } }
  }
}

// --- openid-client ---------------------------------------------------------------------------

/** The provider's client secret; a clear refusal when it was sealed under another CRYPTO_SECRET. */
function openSecret ({ secrets }: Deps<'secrets'>, row: CustomOAuthProvider): string | undefined {
  if (row.client_secret_encrypted === '') return undefined
  try {
    return secrets.open(row.client_secret_encrypted)
  } catch {
    throw fail(COM.secretUnreadable, { provider: row.name })
  }
}

/** openid-client's requests, through the outbound guard (redirects never followed). */
function guardedFetch ({ outbound }: Deps<'outbound'>): client.CustomFetch {
  return async (url, options) => await outbound.fetch(url, {
    method: options.method,
    headers: options.headers,
    body: options.body,
    redirect: 'manual',
    signal: options.signal
  }) as unknown as Response
}

const isHttp = (value: string) => value.startsWith('http:')

/** What openid-client's configurations are made with: the client secret sealed, and the outbound guard. */
export type OidcDeps = Deps<'secrets' | 'outbound'>

// One per provider and settings, so the issuer's JWKS is fetched once and kept (openid-client caches it per configuration).
// Kept per app, found by its outbound guard.
const configurations = new WeakMap<OidcDeps['outbound'], Map<string, client.Configuration>>()

function configurationOf (deps: OidcDeps, row: CustomOAuthProvider): client.Configuration {
  let byVersion = configurations.get(deps.outbound)
  if (byVersion === undefined) {
    byVersion = new Map()
    configurations.set(deps.outbound, byVersion)
  }
  // updated_at counts seconds, so two changes in one second would share it: the fields decide.
  const version = `${row.id}:${createHash('sha256').update(JSON.stringify([row.kind, row.issuer, row.authorization_endpoint, row.token_endpoint,
    row.userinfo_endpoint, row.jwks_uri, row.client_id, row.client_secret_encrypted, row.token_endpoint_auth_method])).digest('base64url')}`
  const known = byVersion.get(version)
  if (known !== undefined) return known

  const server: client.ServerMetadata = {
    // A plain OAuth 2.0 provider may have no issuer; the authorization server's origin stands in.
    issuer: row.issuer !== '' ? row.issuer : new URL(row.authorization_endpoint).origin,
    authorization_endpoint: row.authorization_endpoint,
    token_endpoint: row.token_endpoint,
    id_token_signing_alg_values_supported: ID_TOKEN_ALGS,
    ...(row.userinfo_endpoint !== '' ? { userinfo_endpoint: row.userinfo_endpoint } : {}),
    ...(row.jwks_uri !== '' ? { jwks_uri: row.jwks_uri } : {})
  }
  const secret = openSecret(deps, row) ?? ''
  const auth = row.token_endpoint_auth_method === 'client_secret_post' ? client.ClientSecretPost(secret) : client.ClientSecretBasic(secret)
  const config = new client.Configuration(server, row.client_id, undefined, auth)
  config[client.customFetch] = guardedFetch(deps)
  config.timeout = UPSTREAM_TIMEOUT_S
  // The admin chose these addresses; plain http is theirs to allow (a provider on the LAN).
  if ([row.issuer, row.authorization_endpoint, row.token_endpoint, row.userinfo_endpoint, row.jwks_uri].some(isHttp)) client.allowInsecureRequests(config)
  // Verify the ID token's signature against the issuer's keys, not only its claims.
  if (row.kind === 'oidc') client.enableNonRepudiationChecks(config)

  for (const key of byVersion.keys()) if (key.startsWith(`${row.id}:`)) byVersion.delete(key)
  byVersion.set(version, config)
  return config
}

/** The console page the provider sends the browser back to; the token request repeats it. */
function redirectUriOf (req: FastifyRequest, serverAddress: string, slug: string): string {
  const base = baseUrl(serverAddress.trim())
  return `${base !== '' ? base : `${req.protocol}://${req.host}`}/oauth/${slug}`
}

function scopesOf (row: CustomOAuthProvider): string {
  const scopes = row.scopes.trim().split(/\s+/).filter((s) => s !== '')
  if (row.kind === 'oauth2') return scopes.join(' ')
  if (scopes.length === 0) return OIDC_DEFAULT_SCOPES
  return (scopes.includes('openid') ? scopes : ['openid', ...scopes]).join(' ')
}

/**
 * Starts a sign-in: a PKCE verifier, a nonce (OIDC) and the redirect address kept with a new
 * single-use state (Redis, tied to this browser by the state cookie), and the provider's
 * authorization URL carrying them.
 */
export async function authorizeUrl (deps: OidcDeps & Deps<'redis' | 'loadOptions'>, req: FastifyRequest, reply: FastifyReply, row: CustomOAuthProvider, aff: string): Promise<string> {
  const config = configurationOf(deps, row)
  const verifier = client.randomPKCECodeVerifier()
  const nonce = row.kind === 'oidc' ? client.randomNonce() : ''
  const redirectUri = redirectUriOf(req, (await deps.loadOptions()).str('ServerAddress'), row.slug)
  const state = await issueState(deps, reply, req, aff, { provider: String(row.id), verifier, nonce, redirect_uri: redirectUri })
  const params: Record<string, string> = {
    response_type: 'code',
    redirect_uri: redirectUri,
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256'
  }
  const scope = scopesOf(row)
  if (scope !== '') params['scope'] = scope
  if (nonce !== '') params['nonce'] = nonce
  return client.buildAuthorizationUrl(config, params).href
}

/** The authorization response parameters the callback passes on (the console's page received them). */
export const CALLBACK_PARAMS = ['code', 'state', 'iss', 'error', 'error_description'] as const

/** A claim or field by name, or by a dotted path into nested objects (`data.user.id`). */
function readPath (source: Record<string, unknown> | undefined, path: string): unknown {
  if (source === undefined) return undefined
  if (Object.hasOwn(source, path)) return source[path]
  let value: unknown = source
  for (const part of path.split('.')) {
    if (!isRecord(value) || !Object.hasOwn(value, part)) return undefined
    value = value[part]
  }
  return value
}

function textOf (value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return optionalString(value)
}

interface ClaimNames { id: string, username: string[], displayName: string, email: string }

function claimNamesOf (row: CustomOAuthProvider): ClaimNames {
  const oidc = row.kind === 'oidc'
  return {
    id: row.user_id_field.trim() || (oidc ? 'sub' : 'id'),
    username: row.username_field.trim() !== '' ? [row.username_field.trim()] : oidc ? ['preferred_username'] : ['username', 'login'],
    displayName: row.display_name_field.trim() || 'name',
    email: row.email_field.trim() || 'email'
  }
}

/** The refusal to show for a failed exchange, never a server error; credentials kept out of it. */
function refusalOf (req: FastifyRequest, row: CustomOAuthProvider, err: unknown, known: ReadonlyArray<string | undefined>): ApiError {
  const provider = row.name
  if (err instanceof ApiError) return err
  const code = (err as { code?: unknown }).code
  req.log.warn({ provider: row.slug, code, reason: err instanceof Error ? err.message : String(err) }, 'custom OAuth sign-in refused')
  const refusal = outboundRefusal(err)
  if (refusal !== undefined) return fail(refusal.reason === 'metadata' ? OBM.metadata : refusal.reason === 'private' ? OBM.private : refusal.reason === 'scheme' ? OBM.scheme : OBM.unresolved, { host: refusal.host })
  if (err instanceof client.ResponseBodyError || err instanceof client.AuthorizationResponseError) {
    const detail = providerErrorText({ error: err.error, error_description: err.error_description }, known) ?? err.error
    return fail(OM.providerRefused, { provider, detail })
  }
  if (err instanceof client.WWWAuthenticateChallengeError) {
    const challenge = err.cause[0]
    const detail = providerErrorText(challenge?.parameters ?? {}, known) ?? `HTTP ${err.status}`
    return fail(OM.providerRefused, { provider, detail })
  }
  if (err instanceof client.ClientError) {
    // openid-client wraps oauth4webapi's error, whose own cause names the claim or attribute.
    const inner = err.cause as { cause?: { claim?: unknown } } | undefined
    const cause = { ...(err.cause as object | undefined), ...inner?.cause } as { claim?: unknown }
    if (code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED') {
      if (cause.claim === 'aud' || cause.claim === 'azp') return fail(COM.idTokenAudience, { provider })
      if (cause.claim === 'nonce') return fail(COM.idTokenNonce, { provider })
      if (cause.claim === 'iss') return fail(COM.idTokenIssuer, { provider })
      return fail(COM.idTokenInvalid, { provider, detail: typeof cause.claim === 'string' ? cause.claim : err.message })
    }
    // The userinfo answer names another subject than the ID token.
    if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') return fail(COM.userinfoMismatch, { provider })
    if (code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED') return fail(COM.idTokenExpired, { provider })
    const innerMessage = (err.cause as Error | undefined)?.message ?? ''
    // RFC 9207: the authorization response's `iss` names another issuer (a mix-up).
    if (innerMessage.includes('"iss"')) return fail(COM.idTokenIssuer, { provider })
    if (innerMessage.includes('"state"')) return fail(OM.stateInvalid)
    if (code === 'OAUTH_KEY_SELECTION_FAILED' || /signature/i.test(err.message) || /signature/i.test(innerMessage)) {
      return fail(COM.idTokenSignature, { provider })
    }
    if (code === 'OAUTH_TIMEOUT' || code === 'OAUTH_ABORT') return fail(OM.providerUnavailable, { provider })
    if (code === 'OAUTH_INVALID_RESPONSE' && /ID Token/i.test(innerMessage)) {
      return fail(COM.idTokenInvalid, { provider, detail: innerMessage.slice(0, 120) })
    }
    return fail(OM.providerBadAnswer, { provider })
  }
  // fetch's own failures (connection refused, reset, DNS) reach here as TypeError.
  return fail(OM.providerUnavailable, { provider })
}

/** A plain OAuth 2.0 provider's userinfo answer for the access token. */
async function userinfoJson ({ outbound }: Deps<'outbound'>, req: FastifyRequest, row: CustomOAuthProvider, accessToken: string, known: string[]): Promise<Record<string, unknown>> {
  let status: number
  let text: string
  try {
    const res = await outbound.fetch(row.userinfo_endpoint, {
      headers: { accept: 'application/json', authorization: `Bearer ${accessToken}`, 'user-agent': 'ModelGate' },
      redirect: 'error',
      signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_S * 1000)
    })
    status = res.status
    text = await res.text()
  } catch (err) {
    throw refusalOf(req, row, err, known)
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw fail(OM.providerBadAnswer, { provider: row.name })
  }
  if (status !== 200) throw fail(OM.providerRefused, { provider: row.name, detail: providerErrorText(body, known) ?? `HTTP ${status}` })
  if (!isRecord(body)) throw fail(OM.providerBadAnswer, { provider: row.name })
  return body
}

/**
 * Finishes the provider's side of a callback: the authorization code exchanged (PKCE verifier,
 * state, `iss`), the ID token checked (signature against the JWKS, iss, aud = client_id, exp,
 * nonce) or, for OAuth 2.0, the userinfo endpoint read; then the account's fields by the
 * provider's claim names. `flow` is what {@link authorizeUrl} kept with the state.
 */
export async function customIdentity (
  deps: OidcDeps,
  req: FastifyRequest,
  row: CustomOAuthProvider,
  flow: Record<string, string>,
  state: string,
  query: Partial<Record<typeof CALLBACK_PARAMS[number], string>>
): Promise<OAuthIdentity> {
  const config = configurationOf(deps, row)
  const secret = openSecret(deps, row)
  const current = new URL(flow['redirect_uri'] ?? '')
  for (const name of CALLBACK_PARAMS) {
    const value = query[name]
    if (value !== undefined) current.searchParams.set(name, value)
  }
  // Without an issuer configured there is nothing to compare an `iss` parameter with.
  if (row.kind === 'oauth2' && row.issuer === '') current.searchParams.delete('iss')

  const oidc = row.kind === 'oidc'
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>
  try {
    tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: flow['verifier'],
      expectedState: state,
      ...(oidc ? { expectedNonce: flow['nonce'], idTokenExpected: true } : {})
    })
  } catch (err) {
    throw refusalOf(req, row, err, [secret])
  }
  const known = [secret, tokens.access_token, tokens.refresh_token, tokens.id_token]
  const names = claimNamesOf(row)
  const idClaims = oidc ? tokens.claims() as Record<string, unknown> | undefined : undefined
  let info: Record<string, unknown> | undefined
  if (oidc) {
    const wanted = [names.id, ...names.username, names.displayName, names.email]
    if (row.userinfo_endpoint !== '' && wanted.some((name) => readPath(idClaims, name) === undefined)) {
      try {
        // The userinfo answer must be about the ID token's subject.
        info = await client.fetchUserInfo(config, tokens.access_token, String(idClaims?.['sub'] ?? '')) as Record<string, unknown>
      } catch (err) {
        throw refusalOf(req, row, err, known)
      }
    }
  } else {
    info = await userinfoJson(deps, req, row, tokens.access_token, known.filter((k): k is string => k !== undefined))
  }

  const pick = (name: string): unknown => readPath(idClaims, name) ?? readPath(info, name)
  const id = textOf(pick(names.id))
  if (id === undefined || id.length > SUBJECT_MAX) throw fail(COM.noSubject, { provider: row.name, field: names.id })
  const email = textOf(pick(names.email))
  // An address the provider says it has not verified is not taken for the new account.
  const emailOk = email !== undefined && email.includes('@') && email.length <= 254 && pick('email_verified') !== false
  return {
    provider: 'custom',
    id,
    displayName: textOf(pick(names.displayName)),
    email: emailOk ? email : undefined,
    username: names.username.map((name) => textOf(pick(name))).find((u) => u !== undefined),
    links: customLinks(row)
  }
}

// --- Discovery -------------------------------------------------------------------------------

/**
 * Reads an issuer's `/.well-known/openid-configuration` (or a discovery document's own address)
 * through the outbound guard and answers the endpoints to prefill. The document must name the
 * issuer it was asked for.
 */
export async function discoverProvider (deps: Deps<'outbound'>, req: FastifyRequest, body: CustomOAuthDiscoveryBody): Promise<CustomOAuthDiscoveryResult> {
  const issuer = (body.issuer ?? body.issuer_url ?? '').trim()
  const wellKnown = (body.well_known_url ?? '').trim()
  const target = wellKnown !== '' ? wellKnown : issuer
  if (target === '') throw fail(COM.discoveryIssuerRequired)
  let url: URL
  try {
    url = new URL(target)
  } catch {
    throw fail(COM.endpointInvalid, { field: 'Issuer' })
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fail(COM.endpointInvalid, { field: 'Issuer' })
  // Refused before anything is sent, with the guard's reason (a metadata address, say).
  await checkOutbound(deps.outbound, { url: target })

  let config: client.Configuration
  try {
    config = await client.discovery(url, 'discovery', undefined, undefined, {
      [client.customFetch]: guardedFetch(deps),
      timeout: UPSTREAM_TIMEOUT_S,
      execute: url.protocol === 'http:' ? [client.allowInsecureRequests] : []
    })
  } catch (err) {
    const refusal = outboundRefusal(err)
    if (refusal !== undefined) throw fail(refusal.reason === 'metadata' ? OBM.metadata : refusal.reason === 'private' ? OBM.private : refusal.reason === 'scheme' ? OBM.scheme : OBM.unresolved, { host: refusal.host })
    const cause = (err as { cause?: { attribute?: unknown, body?: { issuer?: unknown } } }).cause
    if (err instanceof client.ClientError && cause?.attribute === 'issuer') {
      throw fail(COM.discoveryIssuerMismatch, { found: String(cause.body?.issuer ?? ''), expected: target })
    }
    req.log.warn({ target, reason: err instanceof Error ? err.message : String(err) }, 'OIDC discovery failed')
    const detail = err instanceof client.ClientError ? err.message : 'could not connect'
    throw fail(COM.discoveryFailed, { detail })
  }
  const meta = config.serverMetadata()
  const str = (v: unknown) => (typeof v === 'string' ? v : '')
  const supportedAuth = Array.isArray(meta.token_endpoint_auth_methods_supported) ? meta.token_endpoint_auth_methods_supported : undefined
  const authMethod: TokenAuthMethodName = supportedAuth === undefined || supportedAuth.includes('client_secret_basic')
    ? 'client_secret_basic'
    : supportedAuth.includes('client_secret_post') ? 'client_secret_post' : 'client_secret_basic'
  const supportedScopes = Array.isArray(meta.scopes_supported) ? meta.scopes_supported : undefined
  const scopes = OIDC_DEFAULT_SCOPES.split(' ').filter((s) => supportedScopes === undefined || s === 'openid' || supportedScopes.includes(s)).join(' ')
  return {
    well_known_url: wellKnown !== '' ? wellKnown : `${baseUrl(issuer)}/.well-known/openid-configuration`,
    issuer: str(meta.issuer),
    authorization_endpoint: str(meta.authorization_endpoint),
    token_endpoint: str(meta.token_endpoint),
    user_info_endpoint: str(meta.userinfo_endpoint),
    jwks_url: str(meta.jwks_uri),
    scopes,
    token_endpoint_auth_method: authMethod,
    discovery: { ...meta }
  }
}
