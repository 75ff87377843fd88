import { ROLES, type Role } from '@modelgate/contracts'
import { lazy, type ComponentType, type LazyExoticComponent } from 'react'

export interface ScreenRoute {
  path: string
  /** Minimum role; PUBLIC needs no sign-in. */
  role: Role | typeof PUBLIC
  page: LazyExoticComponent<ComponentType>
}

/** A route anyone may open, signed in or not. */
export const PUBLIC = 0

const screen = (load: () => Promise<{ default: ComponentType }>) => lazy(load)

/**
 * Every console route, each screen loaded on first visit. PUBLIC routes need no sign-in; the others
 * need a stored user (else /login) of at least their role.
 */
export const ROUTES: ScreenRoute[] = [
  { path: '/', role: ROLES.common, page: screen(async () => await import('./resources/home/HomePage')) },
  { path: '/about', role: PUBLIC, page: screen(async () => await import('./resources/about/AboutPage')) },
  { path: '/login', role: PUBLIC, page: screen(async () => await import('./resources/auth/LoginPage')) },
  { path: '/register', role: PUBLIC, page: screen(async () => await import('./resources/auth/RegisterPage')) },
  // First run without INITIAL_ROOT_PASSWORD: the super admin is created here.
  { path: '/setup', role: PUBLIC, page: screen(async () => await import('./resources/setup/SetupPage')) },
  { path: '/reset', role: PUBLIC, page: screen(async () => await import('./resources/auth/ResetPage')) },
  { path: '/user/reset', role: PUBLIC, page: screen(async () => await import('./resources/auth/ResetConfirmPage')) },
  { path: '/oauth/github', role: PUBLIC, page: screen(async () => await import('./resources/auth/GitHubCallbackPage')) },
  { path: '/oauth/linuxdo', role: PUBLIC, page: screen(async () => await import('./resources/auth/LinuxDOCallbackPage')) },
  // The super admin's OpenID Connect / OAuth 2.0 providers (the fixed paths above win).
  { path: '/oauth/:slug', role: PUBLIC, page: screen(async () => await import('./resources/custom-oauth/CallbackPage')) },
  { path: '/pricing', role: PUBLIC, page: screen(async () => await import('./resources/pricing/PricingPage')) },
  { path: '/chat/:id?', role: PUBLIC, page: screen(async () => await import('./resources/chat/ChatPage')) },
  { path: '/chat2link', role: PUBLIC, page: screen(async () => await import('./resources/chat/Chat2LinkPage')) },
  { path: '/token', role: ROLES.common, page: screen(async () => await import('./resources/token/TokenPage')) },
  { path: '/topup', role: ROLES.common, page: screen(async () => await import('./resources/topup/TopupPage')) },
  { path: '/plans', role: ROLES.common, page: screen(async () => await import('./resources/subscription/PlansPage')) },
  { path: '/log', role: ROLES.common, page: screen(async () => await import('./resources/log/LogPage')) },
  { path: '/detail', role: ROLES.common, page: screen(async () => await import('./resources/detail/DetailPage')) },
  { path: '/playground', role: ROLES.common, page: screen(async () => await import('./resources/playground/PlaygroundPage')) },
  { path: '/setting', role: ROLES.common, page: screen(async () => await import('./resources/setting/SettingPage')) },
  { path: '/two-factor', role: ROLES.common, page: screen(async () => await import('./resources/two-factor/TwoFactorSetupPage')) },
  { path: '/midjourney', role: ROLES.common, page: screen(async () => await import('./resources/midjourney/MidjourneyPage')) },
  { path: '/task', role: ROLES.common, page: screen(async () => await import('./resources/task/TaskPage')) },
  { path: '/channel', role: ROLES.admin, page: screen(async () => await import('./resources/channel/ChannelPage')) },
  { path: '/channel/add', role: ROLES.admin, page: screen(async () => await import('./resources/channel/ChannelPage')) },
  { path: '/channel/edit/:id', role: ROLES.admin, page: screen(async () => await import('./resources/channel/ChannelPage')) },
  { path: '/redemption', role: ROLES.admin, page: screen(async () => await import('./resources/redemption/RedemptionPage')) },
  { path: '/orders', role: ROLES.admin, page: screen(async () => await import('./resources/topup-admin/TopupOrdersPage')) },
  { path: '/subscriptions', role: ROLES.admin, page: screen(async () => await import('./resources/subscription/PlansAdminPage')) },
  { path: '/user', role: ROLES.admin, page: screen(async () => await import('./resources/user/UserPage')) },
  { path: '/user/edit/:id?', role: ROLES.admin, page: screen(async () => await import('./resources/user/UserPage')) },
  { path: '/audit', role: ROLES.root, page: screen(async () => await import('./resources/audit/AuditPage')) }
]
