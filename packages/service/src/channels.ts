import type { Channel } from '@modelgate/db'
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

/** A channel's credentials, one per line of its sealed `key`; throws when CRYPTO_SECRET cannot open it. */
export function channelKeys (row: Pick<Channel, 'key'>, box: SecretBox): string[] {
  return box.open(row.key).split('\n').map((k) => k.trim()).filter((k) => k !== '')
}
