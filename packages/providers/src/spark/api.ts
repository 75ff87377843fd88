import type { ChannelConfig } from '../core/adaptor.js'
import { malformedKey } from '../net/credentials.js'

/** Used when the channel has no base URL (the Spark HTTP API). */
export const SPARK_BASE_URL = 'https://spark-api-open.xf-yun.com'

const VERSION = /^\/?(v\d+)\/?$/

/**
 * The API version path of a request: the channel's `other` when it names one (`v1`, `/v2`), else
 * the version a base URL ends with, else `v2` for the X1 reasoning models and `v1` for the others.
 */
export function sparkVersion (channel: ChannelConfig, base: string, model: string): string {
  const other = VERSION.exec(channel.other.trim())?.[1]
  if (other !== undefined) return other
  const pasted = /\/(v\d+)$/.exec(base)?.[1]
  if (pasted !== undefined) return pasted
  return /^x\d/i.test(model) ? 'v2' : 'v1'
}

/** `${base}/${version}/chat/completions`; a base URL pasted with its version is not doubled. */
export function sparkChatUrl (channel: ChannelConfig, base: string, model: string): string {
  return `${base.replace(/\/v\d+$/, '')}/${sparkVersion(channel, base, model)}/chat/completions`
}

/**
 * The bearer credential of the channel's key: the HTTP APIPassword as it is, or `APIKey:APISecret`
 * (the pair the HTTP API also accepts). A key in the websocket API's `APPID|APISecret|APIKey` form
 * is sent as its `APIKey:APISecret`; any other `|` form is refused before any call.
 */
export function sparkBearer (key: string): string {
  const trimmed = key.trim()
  if (trimmed.includes('|')) {
    const parts = trimmed.split('|').map((part) => part.trim())
    const [, secret, apiKey] = parts
    if (parts.length !== 3 || parts.some((part) => part === '') || secret === undefined || apiKey === undefined) {
      throw malformedKey('an iFlytek Spark key is the HTTP APIPassword, APIKey:APISecret, or APPID|APISecret|APIKey')
    }
    return `${apiKey}:${secret}`
  }
  if (trimmed === '') throw malformedKey('the iFlytek Spark channel has no key (its HTTP APIPassword)')
  return trimmed
}

/** `Authorization: Bearer <APIPassword or APIKey:APISecret>` and the JSON content type. */
export function sparkHeaders (channel: ChannelConfig): Record<string, string> {
  return { Authorization: `Bearer ${sparkBearer(channel.key)}`, 'Content-Type': 'application/json' }
}
