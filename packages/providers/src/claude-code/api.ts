import type { ChannelConfig, RelayRequest, UpstreamRequest } from '../core/adaptor.js'
import { claudeHeaders } from '../claude/index.js'
import { isRecord, str } from '../core/json.js'
import { oauthAccessToken, postRefresh, readOAuthCredentials, tokenUrl, type OAuthRefresher } from '../net/oauth.js'

/** Claude Code's messages endpoint: the CLI asks for beta features with the query flag too. */
export const CLAUDE_CODE_MESSAGES_PATH = '/v1/messages?beta=true'

/** Anthropic's OAuth token endpoint, as the Claude Code CLI renews its sign-in. */
const CLAUDE_CODE_TOKEN_URL = 'https://console.anthropic.com/v1/oauth/token'

/** The Claude Code CLI's public OAuth client id. */
export const CLAUDE_CODE_CLIENT_ID = '9d1c250a-e61b-44d9-88ed-5944d1962f5e'

/** Beta flags every request carries: OAuth bearer tokens are refused without `oauth-2025-04-20`. */
const CLAUDE_CODE_BETAS: readonly string[] = ['claude-code-20250219', 'oauth-2025-04-20']

/**
 * The system prompt's first block on every request: Anthropic serves a subscription's OAuth
 * token only to requests that present themselves as Claude Code.
 */
export const CLAUDE_CODE_SYSTEM_PREFIX = "You are Claude Code, Anthropic's official CLI for Claude."

/** `ours`, then the client's flags not already in it (comma separated, duplicates dropped). */
export function mergeBetas (ours: readonly string[], client: string | undefined): string {
  const all = [...ours, ...(client ?? '').split(',').map((flag) => flag.trim()).filter((flag) => flag !== '')]
  return [...new Set(all)].join(',')
}

/**
 * Anthropic's headers (version, the client's version and beta flags for Anthropic clients)
 * without `x-api-key`, with Claude Code's beta flags merged into `anthropic-beta` and the CLI's
 * `x-app` and user agent. The bearer token is added by `authorizeClaudeCode`.
 */
export function claudeCodeHeaders (channel: ChannelConfig, req?: RelayRequest): Record<string, string> {
  const headers = claudeHeaders(channel, req)
  delete headers['x-api-key']
  headers['anthropic-beta'] = mergeBetas(CLAUDE_CODE_BETAS, headers['anthropic-beta'])
  headers['x-app'] = 'cli'
  headers['user-agent'] = 'claude-cli/2.0.0 (external, cli)'
  return headers
}

/**
 * `body` with Claude Code's identity as the first system block: a string system prompt becomes
 * a text block after it; a system prompt already opening with it (Claude Code's own requests)
 * is left as it is.
 */
export function withClaudeCodeSystem (body: Record<string, unknown>): Record<string, unknown> {
  const system = body.system
  if (system === CLAUDE_CODE_SYSTEM_PREFIX) return body
  const blocks: unknown[] = typeof system === 'string' ? (system === '' ? [] : [{ type: 'text', text: system }]) : Array.isArray(system) ? system : []
  const first = blocks[0]
  if (isRecord(first) && first.type === 'text' && str(first.text)?.trim() === CLAUDE_CODE_SYSTEM_PREFIX) return body
  return { ...body, system: [{ type: 'text', text: CLAUDE_CODE_SYSTEM_PREFIX }, ...blocks] }
}

/** Renews Claude Code access tokens at the channel's token endpoint (`setting.token_url`, else Anthropic's). */
function refresher (channel: ChannelConfig): OAuthRefresher {
  const url = tokenUrl(channel, CLAUDE_CODE_TOKEN_URL)
  return {
    scope: `claude-code ${url}`,
    refresh: async (refreshToken) => await postRefresh(channel, url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CLAUDE_CODE_CLIENT_ID })
  }
}

/** Adds `Authorization: Bearer <access token>`, renewing the token first when it is about to expire. */
export async function authorizeClaudeCode (channel: ChannelConfig, up: UpstreamRequest): Promise<UpstreamRequest> {
  const token = await oauthAccessToken(readOAuthCredentials(channel), refresher(channel), channel)
  const headers = { ...up.headers }
  for (const name of Object.keys(headers)) if (name.toLowerCase() === 'authorization' || name.toLowerCase() === 'x-api-key') delete headers[name]
  headers.authorization = `Bearer ${token}`
  return { ...up, headers }
}
