import type { ChannelConfig, UpstreamRequest } from '../core/adaptor.js'
import { malformedKey } from '../net/credentials.js'
import { tc3Sign } from './sign.js'

/** Used when the channel has no base URL (the Hunyuan API's endpoint, any region). */
export const HUNYUAN_BASE_URL = 'https://hunyuan.tencentcloudapi.com'

/** The API version the adaptor speaks. */
const HUNYUAN_VERSION = '2023-09-01'

/** The service name in the signature's credential scope. */
const HUNYUAN_SERVICE = 'hunyuan'

/** Tencent Cloud API 3.0 takes every action at `/`. */
export function hunyuanUrl (base: string): string {
  return `${base}/`
}

/**
 * The common parameters as headers: the action, the version, the region (the channel's `other`,
 * when set; Hunyuan needs none) and the JSON content type. authorize() adds the timestamp and
 * the signature.
 */
export function hunyuanHeaders (channel: ChannelConfig, action: string): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-TC-Action': action, 'X-TC-Version': HUNYUAN_VERSION }
  const region = channel.other.trim()
  if (region !== '') headers['X-TC-Region'] = region
  return headers
}

/**
 * The SecretId and SecretKey of a channel key `SecretId|SecretKey`, or `AppId|SecretId|SecretKey`
 * (the AppId is not needed by API 3.0 and is ignored). Any other form is refused before any call.
 */
export function hunyuanCredentials (key: string): { secretId: string, secretKey: string } {
  const parts = key.trim().split('|').map((part) => part.trim())
  const [secretId, secretKey] = parts.length === 3 ? parts.slice(1) : parts
  if ((parts.length !== 2 && parts.length !== 3) || secretId === undefined || secretKey === undefined || secretId === '' || secretKey === '') {
    throw malformedKey('a Tencent Hunyuan key is SecretId|SecretKey (or AppId|SecretId|SecretKey)')
  }
  return { secretId, secretKey }
}

function headerValue (headers: Readonly<Record<string, string>>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value
  return undefined
}

/**
 * Signs `up` as it will leave (after the channel's overrides): `X-TC-Timestamp` now and the
 * TC3-HMAC-SHA256 `Authorization` over its content type, host and final body. `now` is for tests.
 */
export function signHunyuan (channel: ChannelConfig, up: UpstreamRequest, now = Date.now()): UpstreamRequest {
  const { secretId, secretKey } = hunyuanCredentials(channel.key)
  const url = new URL(up.url)
  const timestamp = Math.floor(now / 1000)
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(up.headers)) {
    const lower = name.toLowerCase()
    if (lower !== 'authorization' && lower !== 'x-tc-timestamp') headers[name] = value
  }
  const { authorization } = tc3Sign({
    secretId,
    secretKey,
    service: HUNYUAN_SERVICE,
    host: url.host,
    contentType: headerValue(up.headers, 'content-type') ?? '',
    timestamp,
    method: up.method,
    query: url.search.replace(/^\?/, ''),
    payload: up.body ?? ''
  })
  headers['X-TC-Timestamp'] = String(timestamp)
  headers.Authorization = authorization
  return { ...up, headers }
}
