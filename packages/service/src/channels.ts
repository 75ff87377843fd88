import { CHANNEL_STATUS } from '@modelgate/contracts'
import { createHash } from 'node:crypto'
import type { Channel } from '@modelgate/db'
import type { ChannelConfig } from '@modelgate/providers'
import type { SecretBox } from './crypto.js'

/** A JSON object stored as text (channel `setting`, `model_mapping`, ...); {} when empty or malformed. */
export function parseJsonObject (text: string): Record<string, unknown> {
  if (text.trim() === '') return {}
  try {
    const v: unknown = JSON.parse(text)
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

/**
 * Comma (or line) separated names, or an array of them: trimmed, blanks and duplicates dropped.
 * How a channel's models and groups are normalised when saved and read when routed.
 */
export function nameList (value: string | readonly string[]): string[] {
  const parts = (typeof value === 'string' ? [value] : value).flatMap((v) => v.split(/[,\n]/))
  return [...new Set(parts.map((p) => p.trim()).filter((p) => p !== ''))]
}

/**
 * A channel's overrides as adaptors take them: the parameter override's fields and the header
 * override's string values (anything else in the header JSON is ignored; the console refuses it).
 */
export function channelOverrides (row: Pick<Channel, 'param_override' | 'header_override'>): { paramOverride: Record<string, unknown>, headerOverride: Record<string, string> } {
  const headerOverride: Record<string, string> = {}
  for (const [name, value] of Object.entries(parseJsonObject(row.header_override))) if (typeof value === 'string') headerOverride[name] = value
  return { paramOverride: parseJsonObject(row.param_override), headerOverride }
}

/** A channel's credentials, one per line of its sealed `key`; throws when CRYPTO_SECRET cannot open it. */
export function channelKeys (row: Pick<Channel, 'key'>, box: SecretBox): string[] {
  return box.open(row.key).split('\n').map((k) => k.trim()).filter((k) => k !== '')
}

/**
 * The name a key's state goes by in a channel's `key_states`: the first 16 hex digits of its
 * SHA-256, so states follow their keys when the key list is edited or reordered.
 */
export function keyFingerprint (key: string): string {
  return createHash('sha256').update(key.trim()).digest('hex').slice(0, 16)
}

/**
 * What a provider adaptor or task protocol needs of a channel row to call its upstream with `key`
 * (one of channelKeys): address, type extras, proxy and overrides, plus the service's own
 * credential store and outbound guard.
 */
export function channelConfigOf (row: Channel, key: string, extras: Pick<ChannelConfig, 'credentials' | 'outbound'> = {}): ChannelConfig {
  return {
    id: row.id,
    type: row.type,
    key,
    baseUrl: row.base_url.replace(/\/+$/, ''),
    other: row.other,
    organization: row.openai_organization,
    setting: parseJsonObject(row.setting),
    proxyUrl: row.proxy_url.trim(),
    ...channelOverrides(row),
    ...(extras.credentials === undefined ? {} : { credentials: extras.credentials }),
    ...(extras.outbound === undefined ? {} : { outbound: extras.outbound })
  }
}

/**
 * The key a background call (a balance, a task poll) uses: the first one not disabled in the
 * channel's key states (a dead key would only report its own failure), else the first; throws
 * when CRYPTO_SECRET cannot open the channel's keys.
 */
export function firstUsableKey (row: Pick<Channel, 'key' | 'key_states'>, box: SecretBox): string {
  const keys = channelKeys(row, box)
  return keys.find((k) => (row.key_states[keyFingerprint(k)]?.status ?? CHANNEL_STATUS.enabled) === CHANNEL_STATUS.enabled) ?? keys[0] ?? ''
}
