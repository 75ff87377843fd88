import type { ChannelConfig } from '../core/adaptor.js'
import { malformedKey } from '../net/credentials.js'

/** AIProxy's API host, used when the channel has no base URL. */
export const AIPROXY_BASE_URL = 'https://api.aiproxy.io'

const LIBRARY_ASK_PATH = '/api/library/ask'

/** `${base}/api/library/ask`; a base URL pasted with its `/api` is not doubled. */
export function libraryAskUrl (base: string): string {
  return base.endsWith('/api') ? base + LIBRARY_ASK_PATH.slice('/api'.length) : base + LIBRARY_ASK_PATH
}

/** The channel key's parts: AIProxy's API key and the library (knowledge base) to ask. */
interface LibraryKey {
  apiKey: string
  /** A number when the id is all digits (as AIProxy's library ids are), else the text given. */
  libraryId: number | string
}

/**
 * The channel's API key and knowledge base: the base from `other` (the console's knowledge base
 * field), else from a key of the form `<api key>|<library id>`. Throws a CredentialError (the
 * channel is disabled, nothing is sent) when either is missing.
 */
export function libraryKey (channel: ChannelConfig): LibraryKey {
  const key = channel.key.trim()
  const bar = key.indexOf('|')
  const apiKey = (bar === -1 ? key : key.slice(0, bar)).trim()
  const library = (channel.other.trim() !== '' ? channel.other : bar === -1 ? '' : key.slice(bar + 1)).trim()
  if (apiKey === '' || library === '') throw malformedKey('an AI Proxy channel needs its API key and a knowledge base ID (in the knowledge base field, or the key as `<api key>|<library id>`)')
  return { apiKey, libraryId: /^\d+$/.test(library) && library.length < 16 ? Number(library) : library }
}

/**
 * AIProxy's key in both headers its clients use: `Api-Key` (the library API) and a bearer token
 * (the ask endpoint's examples).
 */
export function libraryHeaders (key: LibraryKey): Record<string, string> {
  return { 'Api-Key': key.apiKey, Authorization: `Bearer ${key.apiKey}`, 'Content-Type': 'application/json' }
}
