import { lazy, type ComponentType, type LazyExoticComponent } from 'react'

export interface ScreenRoute {
  path: string
  /** Minimum role; 0 public (no login guard). */
  role: number
  page: LazyExoticComponent<ComponentType>
}

const screen = (load: () => Promise<{ default: ComponentType }>) => lazy(load)

/**
 * Every console route, each screen loaded on first visit. Role 0 is public,
 * 1 needs a stored user (else /login), 10 an admin, 100 the super admin.
 */
export const ROUTES: ScreenRoute[] = [
  { path: '/', role: 1, page: screen(async () => await import('./resources/home/HomePage')) },
  { path: '/about', role: 0, page: screen(async () => await import('./resources/about/AboutPage')) },
  { path: '/login', role: 0, page: screen(async () => await import('./resources/auth/LoginPage')) },
  { path: '/register', role: 0, page: screen(async () => await import('./resources/auth/RegisterPage')) },
  { path: '/reset', role: 0, page: screen(async () => await import('./resources/auth/ResetPage')) },
  { path: '/user/reset', role: 0, page: screen(async () => await import('./resources/auth/ResetConfirmPage')) },
  { path: '/oauth/github', role: 0, page: screen(async () => await import('./resources/auth/GitHubCallbackPage')) },
  { path: '/oauth/linuxdo', role: 0, page: screen(async () => await import('./resources/auth/LinuxDOCallbackPage')) },
  // The super admin's OpenID Connect / OAuth 2.0 providers (the fixed paths above win).
  { path: '/oauth/:slug', role: 0, page: screen(async () => await import('./resources/custom-oauth/CallbackPage')) },
  { path: '/pricing', role: 0, page: screen(async () => await import('./resources/pricing/PricingPage')) },
  { path: '/chat/:id?', role: 0, page: screen(async () => await import('./resources/chat/ChatPage')) },
  { path: '/chat2link', role: 0, page: screen(async () => await import('./resources/chat/Chat2LinkPage')) },
  { path: '/token', role: 1, page: screen(async () => await import('./resources/token/TokenPage')) },
  { path: '/topup', role: 1, page: screen(async () => await import('./resources/topup/TopupPage')) },
  { path: '/log', role: 1, page: screen(async () => await import('./resources/log/LogPage')) },
  { path: '/detail', role: 1, page: screen(async () => await import('./resources/detail/DetailPage')) },
  { path: '/playground', role: 1, page: screen(async () => await import('./resources/playground/PlaygroundPage')) },
  { path: '/setting', role: 1, page: screen(async () => await import('./resources/setting/SettingPage')) },
  { path: '/two-factor', role: 1, page: screen(async () => await import('./resources/two-factor/TwoFactorSetupPage')) },
  { path: '/midjourney', role: 1, page: screen(async () => await import('./resources/midjourney/MidjourneyPage')) },
  { path: '/task', role: 1, page: screen(async () => await import('./resources/task/TaskPage')) },
  { path: '/channel', role: 10, page: screen(async () => await import('./resources/channel/ChannelPage')) },
  { path: '/channel/add', role: 10, page: screen(async () => await import('./resources/channel/ChannelPage')) },
  { path: '/channel/edit/:id', role: 10, page: screen(async () => await import('./resources/channel/ChannelPage')) },
  { path: '/redemption', role: 10, page: screen(async () => await import('./resources/redemption/RedemptionPage')) },
  { path: '/user', role: 10, page: screen(async () => await import('./resources/user/UserPage')) },
  { path: '/user/edit/:id?', role: 10, page: screen(async () => await import('./resources/user/UserPage')) },
  { path: '/audit', role: 100, page: screen(async () => await import('./resources/audit/AuditPage')) }
]
