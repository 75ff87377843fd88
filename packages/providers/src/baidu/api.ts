import type { ChannelConfig, UpstreamRequest } from '../core/adaptor.js'
import { cachedToken, CredentialError, exchange, forgetToken, malformedKey } from '../net/credentials.js'
import { isRecord, num, parseJson, str } from '../core/json.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'

/** Used when the channel has no base URL (Baidu AI Cloud's Qianfan / Wenxin Workshop API). */
export const BAIDU_BASE_URL = 'https://aip.baidubce.com'

/** The prefix of every model path (chat and embeddings). */
const BAIDU_API_PREFIX = '/rpc/2.0/ai_custom/v1/wenxinworkshop'

/**
 * Chat endpoints whose name is not the model name in lower case (the Qianfan console's names
 * for Baidu's preset services). Any other model goes to `/chat/<model in lower case>`, which is
 * how the newer ERNIE services (ERNIE-4.0-Turbo-8K, ERNIE-Speed-128K, ...) and a custom
 * deployment's own endpoint name are reached.
 */
const CHAT_ENDPOINTS: Readonly<Record<string, string>> = {
  'ERNIE-4.0-8K': 'completions_pro',
  'ERNIE-4.0-8K-Preview-0518': 'completions_adv_pro',
  'ERNIE-3.5-8K': 'completions',
  'ERNIE-Speed-8K': 'ernie_speed',
  'ERNIE-Lite-8K': 'ernie-lite-8k',
  'ERNIE-Lite-8K-0308': 'ernie-lite-8k',
  'ERNIE-Lite-8K-0922': 'eb-instant',
  'ERNIE-Function-8K': 'ernie-func-8k',
  'ERNIE-Character-8K': 'ernie-char-8k',
  'ERNIE-Character-Fiction-8K': 'ernie-char-fiction-8k',
  'ERNIE-Speed-AppBuilder': 'ai_apaas',
  'ERNIE-Lite-AppBuilder-8K-0614': 'ai_apaas_lite',
  // The names of the first ERNIE Bot releases.
  'ERNIE-Bot-4': 'completions_pro',
  'ERNIE-Bot': 'completions',
  'ERNIE-Bot-turbo': 'eb-instant',
  'ERNIE-Bot-8K': 'ernie_bot_8k',
  'BLOOMZ-7B': 'bloomz_7b1',
  'Llama-2-7B-Chat': 'llama_2_7b',
  'Llama-2-13B-Chat': 'llama_2_13b',
  'Llama-2-70B-Chat': 'llama_2_70b',
  'Meta-Llama-3-8B': 'llama_3_8b',
  'Meta-Llama-3-70B': 'llama_3_70b'
}

/** Embedding endpoints by model name (any other: the name in lower case). */
const EMBEDDING_ENDPOINTS: Readonly<Record<string, string>> = {
  'Embedding-V1': 'embedding-v1',
  'bge-large-zh': 'bge_large_zh',
  'bge-large-en': 'bge_large_en',
  'tao-8k': 'tao_8k'
}

const lookup = (table: Readonly<Record<string, string>>, model: string): string | undefined => {
  if (Object.hasOwn(table, model)) return table[model]
  const lower = model.toLowerCase()
  for (const [name, endpoint] of Object.entries(table)) if (name.toLowerCase() === lower) return endpoint
  return undefined
}

/** Whether `model` names one of Baidu's embedding models (the channel test then asks for an embedding). */
export function isBaiduEmbeddingModel (model: string): boolean {
  return lookup(EMBEDDING_ENDPOINTS, model) !== undefined
}

/** The URL of a chat (or embeddings) request for `model`, without its access token. */
export function baiduUrl (channel: ChannelConfig, kind: 'chat' | 'embeddings', model: string): string {
  const table = kind === 'chat' ? CHAT_ENDPOINTS : EMBEDDING_ENDPOINTS
  const endpoint = lookup(table, model) ?? model.toLowerCase()
  return `${resolveBaseUrl(channel, BAIDU_BASE_URL)}${BAIDU_API_PREFIX}/${kind}/${encodeURIComponent(endpoint)}`
}

/** The API key and secret key of a channel key written `API_KEY|SECRET_KEY`. */
function baiduCredentials (key: string): { apiKey: string, secretKey: string } {
  const parts = key.trim().split('|')
  const apiKey = parts[0]?.trim() ?? ''
  const secretKey = parts[1]?.trim() ?? ''
  if (parts.length !== 2 || apiKey === '' || secretKey === '') {
    throw malformedKey('the Baidu key must be written API_KEY|SECRET_KEY')
  }
  return { apiKey, secretKey }
}

/** The token cache's scope of a channel: tokens are per base URL (Baidu's or a private deployment's). */
function tokenScope (channel: ChannelConfig): string {
  return `baidu:${resolveBaseUrl(channel, BAIDU_BASE_URL)}`
}

/** The OAuth answer's own error (`{error, error_description}`), as a message without the secret. */
function oauthMessage (json: unknown, status: number): string {
  const error = isRecord(json) ? str(json.error) : undefined
  const description = isRecord(json) ? str(json.error_description) : undefined
  if (error === undefined && description === undefined) return `the Baidu access token request failed with HTTP ${status}`
  return `the Baidu access token was refused: ${[error, description].filter((part) => part !== undefined && part !== '').join(': ')}`
}

/**
 * Obtains an access token (`POST /oauth/2.0/token?grant_type=client_credentials&client_id=…&client_secret=…`,
 * answered `{access_token, expires_in}` in seconds, about 30 days). Baidu refuses unknown or wrong
 * keys with `{error: 'invalid_client'}`: the channel is disabled (whatever the status); other
 * answers without a token are retried.
 */
async function obtainToken (channel: ChannelConfig): Promise<{ token: string, expiresAt: number }> {
  const { apiKey, secretKey } = baiduCredentials(channel.key)
  const query = new URLSearchParams({ grant_type: 'client_credentials', client_id: apiKey, client_secret: secretKey })
  const up: UpstreamRequest = {
    method: 'POST',
    url: `${resolveBaseUrl(channel, BAIDU_BASE_URL)}/oauth/2.0/token?${query.toString()}`,
    headers: { 'content-type': 'application/json', accept: 'application/json' }
  }
  const started = Date.now()
  const { status, body } = await exchange(channel, up, (code, text) => oauthMessage(parseJson(text), code))
  const json = parseJson(body)
  const token = isRecord(json) ? str(json.access_token) : undefined
  const expiresIn = isRecord(json) ? num(json.expires_in) : undefined
  if (token !== undefined && token !== '' && expiresIn !== undefined && expiresIn > 0) {
    return { token, expiresAt: started + expiresIn * 1000 }
  }
  const refused = isRecord(json) && str(json.error) !== undefined
  throw new CredentialError({ action: refused ? 'disable' : 'retry', message: oauthMessage(json, status) }, refused ? 401 : 502)
}

/**
 * Adds the channel's access token to the request URL (`access_token=`), obtaining one from the
 * key first when none is cached (see net/credentials.ts cachedToken: one exchange shared by every
 * request, renewed before it expires).
 */
export async function authorizeBaidu (channel: ChannelConfig, up: UpstreamRequest): Promise<UpstreamRequest> {
  baiduCredentials(channel.key)
  const token = await cachedToken(tokenScope(channel), channel.key.trim(), async () => await obtainToken(channel))
  return { ...up, url: `${up.url}${up.url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(token)}` }
}

/** Drops the channel's cached access token (Baidu answered that it is invalid or expired). */
export function forgetBaiduToken (channel: ChannelConfig): void {
  forgetToken(tokenScope(channel), channel.key.trim())
}
