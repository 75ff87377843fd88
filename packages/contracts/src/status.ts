import Type, { type Static } from 'typebox'
import { ApiEnvelope } from './api.js'
import { PublicCustomOAuthProvider } from './custom-oauth.js'

/** `GET /api/status` data: public settings the console keeps locally (docs/domain.md). */
export const StatusData = Type.Object({
  version: Type.String(),
  start_time: Type.Integer(),
  system_name: Type.String(),
  logo: Type.String(),
  footer_html: Type.String(),
  quota_per_unit: Type.Number(),
  display_in_currency: Type.Boolean(),
  display_token_stat: Type.Boolean(),
  enable_drawing: Type.Boolean(),
  enable_task: Type.Boolean(),
  enable_data_export: Type.Boolean(),
  data_export_default_time: Type.String(),
  default_collapse_sidebar: Type.Boolean(),
  mj_notify_enabled: Type.Boolean(),
  chats: Type.Unknown(),
  chat_link: Type.String(),
  chat_link2: Type.String(),
  github_oauth: Type.Boolean(),
  github_client_id: Type.String(),
  linuxdo_oauth: Type.Boolean(),
  linuxdo_client_id: Type.String(),
  wechat_login: Type.Boolean(),
  wechat_qrcode: Type.String(),
  telegram_oauth: Type.Boolean(),
  telegram_bot_name: Type.String(),
  turnstile_check: Type.Boolean(),
  turnstile_site_key: Type.String(),
  email_verification: Type.Boolean(),
  password_login: Type.Boolean(),
  /** Passkeys are switched on (PasskeyEnabled): the login page offers "Sign in with a passkey". */
  passkey_login: Type.Boolean(),
  password_register: Type.Boolean(),
  register_enabled: Type.Boolean(),
  server_address: Type.String(),
  top_up_link: Type.String(),
  min_topup: Type.Number(),
  price: Type.Number(),
  enable_online_topup: Type.Boolean(),
  /** Stripe Checkout top-up is configured (secret key, webhook secret, server address). */
  enable_stripe_topup: Type.Boolean(),
  stripe_min_topup: Type.Number(),
  /** Price of one unit in the Stripe currency's major unit. */
  stripe_unit_price: Type.Number(),
  stripe_currency: Type.String(),
  /** Enabled OpenID Connect / OAuth 2.0 providers the super admin added, one sign-in button each. */
  custom_oauth_providers: Type.Optional(Type.Array(PublicCustomOAuthProvider))
})
export type StatusData = Static<typeof StatusData>

export const StatusResponse = ApiEnvelope(StatusData)
export type StatusResponse = Static<typeof StatusResponse>
