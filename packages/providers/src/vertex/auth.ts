import type { ChannelConfig, UpstreamRequest } from '../core/adaptor.js'
import { cachedToken, CredentialError, exchange, malformedKey, type Token } from '../net/credentials.js'
import { isRecord, num, parseJson, str } from '../core/json.js'
import { serviceAccount, type ServiceAccount } from './api.js'

/** The OAuth scope of Vertex AI calls. */
const VERTEX_SCOPE = 'https://www.googleapis.com/auth/cloud-platform'

/** The grant of a service account's signed assertion (RFC 7523). */
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer'

/** Lifetime of an assertion: Google's longest. */
const ASSERTION_SECONDS = 3600

/**
 * The signed assertion a service account exchanges for an access token: an RS256 JWT from
 * `client_email` to the token endpoint (`aud`), for the cloud-platform scope, valid one hour,
 * with the key's id as `kid`.
 */
export async function vertexAssertion (account: ServiceAccount): Promise<string> {
  // Loaded on the first assertion: a gateway without Vertex AI or Zhipu channels does not carry jose.
  const { importPKCS8, SignJWT } = await import('jose')
  let key: Awaited<ReturnType<typeof importPKCS8>>
  try {
    key = await importPKCS8(account.privateKey, 'RS256')
  } catch {
    throw malformedKey('the Vertex AI service account\'s private_key is not a PKCS#8 PEM RSA key')
  }
  const now = Math.floor(Date.now() / 1000)
  return await new SignJWT({ scope: VERTEX_SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.privateKeyId === undefined ? {} : { kid: account.privateKeyId }) })
    .setIssuer(account.clientEmail)
    .setAudience(account.tokenUri)
    .setIssuedAt(now)
    .setExpirationTime(now + ASSERTION_SECONDS)
    .sign(key)
}

/** Google's OAuth error (`{error, error_description}`), as a message without the secret. */
function oauthMessage (json: unknown, status: number): string {
  const error = isRecord(json) ? str(json.error) : undefined
  const description = isRecord(json) ? str(json.error_description) : undefined
  if (error === undefined && description === undefined) return `the Google access token request failed with HTTP ${status}`
  return `the Google access token was refused: ${[error, description].filter((part) => part !== undefined && part !== '').join(': ')}`
}

/**
 * Exchanges a fresh assertion at the account's `token_uri` (form-encoded `grant_type` and
 * `assertion`) for `{access_token, expires_in}` (an hour). A refusal (`invalid_grant`: a wrong
 * or deleted key, an unknown account) disables the channel; an answer without a token is retried.
 */
async function obtainToken (channel: ChannelConfig, account: ServiceAccount): Promise<Token> {
  const assertion = await vertexAssertion(account)
  const up: UpstreamRequest = {
    method: 'POST',
    url: account.tokenUri,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion }).toString()
  }
  const started = Date.now()
  const { status, body } = await exchange(channel, up, (code, text) => oauthMessage(parseJson(text), code))
  const json = parseJson(body)
  const token = isRecord(json) ? str(json.access_token) : undefined
  const expiresIn = isRecord(json) ? num(json.expires_in) : undefined
  if (token !== undefined && token !== '' && expiresIn !== undefined && expiresIn > 0) return { token, expiresAt: started + expiresIn * 1000 }
  throw new CredentialError({ action: 'retry', message: oauthMessage(json, status) }, 502)
}

/**
 * Adds `Authorization: Bearer <access token>` of the channel's service account, exchanging an
 * assertion first when no token is cached (net/credentials.ts cachedToken: one exchange shared by
 * concurrent requests, renewed before it expires).
 */
export async function authorizeVertex (channel: ChannelConfig, up: UpstreamRequest): Promise<UpstreamRequest> {
  const account = serviceAccount(channel)
  const token = await cachedToken(`vertex:${account.tokenUri}`, channel.key.trim(), async () => await obtainToken(channel, account))
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(up.headers)) if (name.toLowerCase() !== 'authorization') headers[name] = value
  headers.authorization = `Bearer ${token}`
  return { ...up, headers }
}
