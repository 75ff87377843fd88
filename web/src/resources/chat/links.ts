import { TOKEN_STATUS } from '@modelgate/contracts'
import { get, type Page, post } from '../../api/client'

/** Fills a chat link template: `{key}` with the relay key, `{address}` with the server address. */
export function chatUrl (template: string, key: string, address: string): string {
  const full = key.startsWith('sk-') ? key : `sk-${key}`
  if (!template.includes('{key}')) {
    // ChatGPT-Next-Web style links take the settings in the hash.
    return `${template.replace(/\/+$/, '')}/#/?settings=${encodeURIComponent(JSON.stringify({ key: full, url: address }))}`
  }
  return template.replaceAll('{address}', encodeURIComponent(address)).replaceAll('{key}', full)
}

/** The full key of the user's first enabled token, or undefined when there is none. */
export async function firstEnabledKey (): Promise<string | undefined> {
  const page = await get<Page<{ id: number, status: number }>>('/api/token/', { p: 1, size: 100 })
  const token = page.items.find((t) => t.status === TOKEN_STATUS.enabled)
  if (token === undefined) return undefined
  const { key } = await post<{ key: string }>(`/api/token/${token.id}/key`)
  return key
}

/** The address chat clients should call: ServerAddress, else this page's origin. */
export function serverAddress (configured: string | undefined): string {
  return configured !== undefined && configured !== '' ? configured : window.location.origin
}
