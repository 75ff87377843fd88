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

/** A channel's credentials, one per line of its sealed `key`; throws when CRYPTO_SECRET cannot open it. */
export function channelKeys (row: Pick<Channel, 'key'>, box: SecretBox): string[] {
  return box.open(row.key).split('\n').map((k) => k.trim()).filter((k) => k !== '')
}
