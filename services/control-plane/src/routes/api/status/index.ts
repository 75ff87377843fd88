import { ApiEnvelope, CreemStatusFields, StatusData } from '@modelgate/contracts'
import type { OptionValues } from '@modelgate/contracts'
import type { FastifyInstance } from 'fastify'
import { onlineTopUpReady } from '../../../services/epay.js'
import { stripeTopUpReady } from '../../../services/stripe.js'
import { creemProductViews, creemTopUpReady } from '../../../services/creem.js'
import Type from 'typebox'

/** Builds the public status object from options (docs/domain.md, "status object"). */
export function statusFromOptions (o: OptionValues, meta: { version: string, startTime: number }): StatusData & CreemStatusFields {
  return {
    version: meta.version,
    start_time: meta.startTime,
    system_name: o.str('SystemName'),
    logo: o.str('Logo'),
    footer_html: o.str('Footer'),
    quota_per_unit: o.num('QuotaPerUnit'),
    display_in_currency: o.bool('DisplayInCurrencyEnabled'),
    display_token_stat: o.bool('DisplayTokenStatEnabled'),
    enable_drawing: o.bool('DrawingEnabled'),
    enable_task: o.bool('TaskEnabled'),
    enable_data_export: o.bool('DataExportEnabled'),
    data_export_default_time: o.str('DataExportDefaultTime'),
    default_collapse_sidebar: o.bool('DefaultCollapseSidebar'),
    mj_notify_enabled: o.bool('MjNotifyEnabled'),
    chats: o.json('Chats'),
    chat_link: o.str('ChatLink'),
    chat_link2: o.str('ChatLink2'),
    github_oauth: o.bool('GitHubOAuthEnabled'),
    github_client_id: o.str('GitHubClientId'),
    linuxdo_oauth: o.bool('LinuxDOOAuthEnabled'),
    linuxdo_client_id: o.str('LinuxDOClientId'),
    wechat_login: o.bool('WeChatAuthEnabled'),
    wechat_qrcode: o.str('WeChatAccountQRCodeImageURL'),
    telegram_oauth: o.bool('TelegramOAuthEnabled'),
    telegram_bot_name: o.str('TelegramBotName'),
    turnstile_check: o.bool('TurnstileCheckEnabled'),
    turnstile_site_key: o.str('TurnstileSiteKey'),
    email_verification: o.bool('EmailVerificationEnabled'),
    password_login: o.bool('PasswordLoginEnabled'),
    passkey_login: o.bool('PasskeyEnabled'),
    password_register: o.bool('PasswordRegisterEnabled'),
    register_enabled: o.bool('RegisterEnabled'),
    server_address: o.str('ServerAddress'),
    top_up_link: o.str('TopUpLink'),
    min_topup: o.num('MinTopUp'),
    price: o.num('Price'),
    enable_online_topup: onlineTopUpReady(o),
    enable_stripe_topup: stripeTopUpReady(o),
    stripe_min_topup: o.num('StripeMinTopUp'),
    stripe_unit_price: o.num('StripeUnitPrice'),
    stripe_currency: o.str('StripeCurrency'),
    enable_creem_topup: creemTopUpReady(o),
    // Names, prices and quota only: the API key and webhook secret never leave the options.
    creem_products: creemProductViews(o)
  }
}

/** The status object with what the wallet needs to offer Creem top-up. */
const StatusWithCreem = ApiEnvelope(Type.Object({ ...StatusData.properties, ...CreemStatusFields.properties }))

export default async function statusRoutes (app: FastifyInstance, opts: { version: string, startTime: number }) {
  app.get('/', { config: { auth: 'public' }, schema: { response: { 200: StatusWithCreem } } }, async () => ({
    success: true,
    message: '',
    data: { ...statusFromOptions(await app.loadOptions(), opts), custom_oauth_providers: await app.publicOAuthProviders() }
  }))
}

/** Public content pages the super admin writes (Markdown, HTML or a URL to embed). */
export async function contentRoutes (app: FastifyInstance) {
  const pages = { '/notice': 'Notice', '/about': 'About', '/home_page_content': 'HomePageContent' } as const
  for (const [url, key] of Object.entries(pages)) {
    app.get(url, { config: { auth: 'public' } }, async () => ({ success: true, message: '', data: (await app.loadOptions()).str(key) }))
  }
}
