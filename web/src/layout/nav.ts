import { ROLES, type Role, type StatusData } from '@modelgate/contracts'

export interface NavEntry {
  to: string
  /** i18n key of the label. */
  label: string
  /** Minimum role. */
  role: Role
  /** Shown only when this returns true for the status object. */
  when?: (status: StatusData | undefined) => boolean
}

/** Sidebar entries in order; the role hides entries a user may not use (docs/domain.md). */
export const NAV: NavEntry[] = [
  { to: '/detail', label: 'nav.detail', role: ROLES.common },
  { to: '/channel', label: 'nav.channel', role: ROLES.admin },
  { to: '/token', label: 'nav.token', role: ROLES.common },
  { to: '/playground', label: 'nav.playground', role: ROLES.common },
  { to: '/redemption', label: 'nav.redemption', role: ROLES.admin },
  { to: '/topup', label: 'nav.topup', role: ROLES.common },
  { to: '/plans', label: 'subscription.nav.plans', role: ROLES.common },
  { to: '/orders', label: 'topupAdmin.nav', role: ROLES.admin },
  { to: '/subscriptions', label: 'subscription.nav.admin', role: ROLES.admin },
  { to: '/user', label: 'nav.user', role: ROLES.admin },
  { to: '/log', label: 'nav.log', role: ROLES.common },
  { to: '/audit', label: 'nav.audit', role: ROLES.root },
  { to: '/midjourney', label: 'nav.midjourney', role: ROLES.common, when: (s) => s?.enable_drawing === true },
  { to: '/task', label: 'nav.task', role: ROLES.common, when: (s) => s?.enable_task === true },
  { to: '/pricing', label: 'nav.pricing', role: ROLES.common },
  { to: '/setting', label: 'nav.setting', role: ROLES.common }
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
