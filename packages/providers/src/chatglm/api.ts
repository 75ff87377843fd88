import type { ChannelConfig, UpstreamRequest } from '../core/adaptor.js'
import { cachedToken, malformedKey } from '../net/credentials.js'
import type { UrlContext } from '../openai-compatible/index.js'

/** Used when the channel has no base URL (Zhipu's open platform, BigModel). */
export const ZHIPU_BASE_URL = 'https://open.bigmodel.cn'

/** The API's path prefix (version 4). */
const ZHIPU_API_PREFIX = '/api/paas/v4'

/** How long a signed token is valid; it is renewed 5 minutes before (net/credentials.ts). */
export const ZHIPU_TOKEN_TTL_MS = 30 * 60_000

/** Paths of the endpoints Zhipu serves, below the API prefix. */
const PATHS: Readonly<Partial<Record<UrlContext['target'], string>>> = {
  chat: '/chat/completions',
  embeddings: '/embeddings'
}

/**
 * The URL of `target` for types serving `targets`; undefined for the others (and for the model
 * list: Zhipu has none). A base URL pasted with `/api/paas/v4` is not doubled.
 */
export function zhipuUrlFor (targets: ReadonlySet<UrlContext['target']>): (context: UrlContext) => string | undefined {
  return ({ base, target }) => {
    const path = targets.has(target) ? PATHS[target] : undefined
    if (path === undefined) return undefined
    return (base.endsWith(ZHIPU_API_PREFIX) ? base : base + ZHIPU_API_PREFIX) + path
  }
}

/** The id and secret of a Zhipu API key (`id.secret`). */
function zhipuKey (key: string): { id: string, secret: string } {
  const trimmed = key.trim()
  const dot = trimmed.indexOf('.')
  const id = dot < 0 ? '' : trimmed.slice(0, dot)
  const secret = dot < 0 ? '' : trimmed.slice(dot + 1)
  if (id === '' || secret === '' || secret.includes('.')) throw malformedKey('the Zhipu key must be written id.secret, as the BigModel console shows it')
  return { id, secret }
}

/**
 * The JWT Zhipu accepts in place of the key: HS256 over `{api_key: id, exp, timestamp}` (both in
 * milliseconds, as Zhipu wants them) with the header's `sign_type: 'SIGN'`, signed with the
 * secret; valid {@link ZHIPU_TOKEN_TTL_MS}.
 */
async function zhipuToken (key: string, now = Date.now()): Promise<{ token: string, expiresAt: number }> {
  const { id, secret } = zhipuKey(key)
  const expiresAt = now + ZHIPU_TOKEN_TTL_MS
  // Loaded on the first token: a gateway without Zhipu or Vertex AI channels does not carry jose.
  const { SignJWT } = await import('jose')
  const token = await new SignJWT({ api_key: id, exp: expiresAt, timestamp: now })
    .setProtectedHeader({ alg: 'HS256', sign_type: 'SIGN' })
    .sign(new TextEncoder().encode(secret))
  return { token, expiresAt }
}

/**
 * `Authorization: Bearer <JWT>` made from the channel's key, one token per key shared until
 * shortly before it expires (net/credentials.ts cachedToken). A key of the wrong form disables the
 * channel before any call. An Authorization header the channel's header override set is left
 * as it is (Zhipu also takes the bare key as a Bearer token: `Bearer {api_key}`).
 */
export async function authorizeZhipu (channel: ChannelConfig, up: UpstreamRequest): Promise<UpstreamRequest> {
  if (Object.keys(up.headers).some((name) => name.toLowerCase() === 'authorization')) return up
  const key = channel.key.trim()
  zhipuKey(key)
  const token = await cachedToken('zhipu-jwt', key, async () => await zhipuToken(key))
  return { ...up, headers: { ...up.headers, Authorization: `Bearer ${token}` } }
}
