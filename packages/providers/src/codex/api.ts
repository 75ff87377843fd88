import { randomUUID } from 'node:crypto'
import type { ChannelConfig, UpstreamRequest } from '../core/adaptor.js'
import { malformedKey } from '../net/credentials.js'
import { isRecord, num, str } from '../core/json.js'
import { field, jwtClaims, oauthAccessToken, postRefresh, readOAuthCredentials, tokenUrl, type OAuthCredentials, type OAuthRefresher } from '../net/oauth.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'

/** The ChatGPT backend's Codex root, as the Codex CLI calls it with a ChatGPT sign-in. */
export const CODEX_BASE_URL = 'https://chatgpt.com/backend-api/codex'

const CODEX_RESPONSES_PATH = '/responses'

/** OpenAI's OAuth token endpoint, where the Codex CLI renews its sign-in. */
const CODEX_TOKEN_URL = 'https://auth.openai.com/oauth/token'

/** The Codex CLI's public OAuth client id. */
export const CODEX_CLIENT_ID = 'app_EMoamEEZ73f0CkXaXp7hrann'

/** The `originator` header the Codex CLI sends. */
const CODEX_ORIGINATOR = 'codex_cli_rs'

/** The claim of OpenAI's tokens that holds the ChatGPT account (`chatgpt_account_id`). */
const AUTH_CLAIM = 'https://api.openai.com/auth'

/** `${base}/responses`. */
export function codexUrl (channel: ChannelConfig): string {
  return resolveBaseUrl(channel, CODEX_BASE_URL) + CODEX_RESPONSES_PATH
}

/**
 * The Codex CLI's headers for a Responses request (the bearer token and `chatgpt-account-id` are
 * added by `authorizeCodex`). `session_id` groups a conversation's requests on the backend: the
 * client's `prompt_cache_key` when it sends one (the Codex CLI sends its conversation id), else
 * a fresh id.
 */
export function codexHeaders (body: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const key = str(body?.prompt_cache_key)?.trim()
  return {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    'openai-beta': 'responses=experimental',
    originator: CODEX_ORIGINATOR,
    session_id: key === undefined || key === '' ? randomUUID() : key,
    'user-agent': `${CODEX_ORIGINATOR}/0.50.0`
  }
}

/** The ChatGPT account id in a token's `https://api.openai.com/auth` claim. */
function claimedAccount (token: unknown): string | undefined {
  const auth = jwtClaims(str(token))?.[AUTH_CLAIM]
  return isRecord(auth) ? str(auth.chatgpt_account_id) : undefined
}

/**
 * The ChatGPT account to name in `chatgpt-account-id`: the credentials' `account_id`, else the
 * claim of the access token or of the `id_token`, else the channel setting's `account_id`.
 */
function codexAccountId (channel: ChannelConfig, credentials: OAuthCredentials, accessToken: string): string {
  const account = field(credentials.fields, 'account_id', 'accountId', 'chatgpt_account_id') ??
    claimedAccount(accessToken) ?? claimedAccount(credentials.fields.id_token) ??
    (typeof channel.setting.account_id === 'string' && channel.setting.account_id.trim() !== '' ? channel.setting.account_id.trim() : undefined)
  if (account === undefined) throw malformedKey('the credentials name no ChatGPT account (account_id), and the access token does not carry one')
  return account
}

/** Renews Codex access tokens at the channel's token endpoint (`setting.token_url`, else OpenAI's). */
function refresher (channel: ChannelConfig): OAuthRefresher {
  const url = tokenUrl(channel, CODEX_TOKEN_URL)
  return {
    scope: `codex ${url}`,
    refresh: async (refreshToken) => await postRefresh(channel, url, {
      client_id: CODEX_CLIENT_ID,
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      scope: 'openid profile email'
    })
  }
}

/**
 * Adds `Authorization: Bearer <access token>` and `chatgpt-account-id`, renewing the access
 * token first when it is about to expire. OpenAI's access tokens are JWTs: without an
 * `expires_at`, their `exp` claim tells when.
 */
export async function authorizeCodex (channel: ChannelConfig, up: UpstreamRequest): Promise<UpstreamRequest> {
  const credentials = readOAuthCredentials(channel)
  if (credentials.expiresAt === undefined) {
    const exp = num(jwtClaims(credentials.accessToken)?.exp)
    if (exp !== undefined) credentials.expiresAt = exp * 1000
  }
  const token = await oauthAccessToken(credentials, refresher(channel), channel)
  const headers = { ...up.headers }
  for (const name of Object.keys(headers)) if (name.toLowerCase() === 'authorization' || name.toLowerCase() === 'chatgpt-account-id') delete headers[name]
  headers.authorization = `Bearer ${token}`
  headers['chatgpt-account-id'] = codexAccountId(channel, credentials, token)
  return { ...up, headers }
}
