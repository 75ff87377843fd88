import type { StatusData } from '@modelgate/contracts'

export interface NavEntry {
  to: string
  /** i18n key of the label. */
  label: string
  /** Minimum role (1 user, 10 admin, 100 super admin). */
  role: number
  /** Shown only when this returns true for the status object. */
  when?: (status: StatusData | undefined) => boolean
}

/** Sidebar entries in order; the role hides entries a user may not use (docs/domain.md). */
export const NAV: NavEntry[] = [
  { to: '/detail', label: 'nav.detail', role: 1 },
  { to: '/channel', label: 'nav.channel', role: 10 },
  { to: '/token', label: 'nav.token', role: 1 },
  { to: '/playground', label: 'nav.playground', role: 1 },
  { to: '/redemption', label: 'nav.redemption', role: 10 },
  { to: '/topup', label: 'nav.topup', role: 1 },
  { to: '/user', label: 'nav.user', role: 10 },
  { to: '/log', label: 'nav.log', role: 1 },
  { to: '/audit', label: 'nav.audit', role: 100 },
  { to: '/midjourney', label: 'nav.midjourney', role: 1, when: (s) => s?.enable_drawing === true },
  { to: '/task', label: 'nav.task', role: 1, when: (s) => s?.enable_task === true },
  { to: '/pricing', label: 'nav.pricing', role: 1 },
  { to: '/setting', label: 'nav.setting', role: 1 }
]

/** Chat entries from the Chats option: a list of `{name: url}` objects (or one object of them). */
export function chatEntries (chats: unknown): Array<{ name: string, url: string }> {
  const list = Array.isArray(chats) ? chats : typeof chats === 'object' && chats !== null ? [chats] : []
  const out: Array<{ name: string, url: string }> = []
  for (const item of list) {
    if (typeof item !== 'object' || item === null) continue
    for (const [name, url] of Object.entries(item as Record<string, unknown>)) if (typeof url === 'string' && url !== '') out.push({ name, url })
  }
  return out
}
