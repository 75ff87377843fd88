import Stack from '@mui/material/Stack'
import { useTranslation } from 'react-i18next'
import { CustomOAuthProvidersCard } from '../custom-oauth/ProvidersCard'
import { PasskeySettingsCard } from '../passkey/PasskeySettingsCard'
import { EmailWhitelistCard } from '../settings-admin/EmailWhitelistCard'
import { FieldsCard } from '../settings-admin/OptionCard'
import { OptionsProvider, useOptions } from '../settings-admin/OptionsProvider'

/** The super admin's system options. */
export default function SystemSetting () {
  return (
    <OptionsProvider>
      <SystemCards />
    </OptionsProvider>
  )
}

function SystemCards () {
  const { t } = useTranslation()
  const { options } = useOptions()
  // Callback addresses are built from the stored server address (the one users' browsers reach).
  const server = options.ServerAddress?.value ?? ''
  const base = server !== '' ? server : window.location.origin
  const callback = (path: string) => t('settingsAdmin.help.callback', { url: `${base}${path}` })

  return (
    <Stack sx={{ gap: 2 }}>
      <FieldsCard
        id='server'
        title={t('settingsAdmin.cards.server')}
        fields={[
          { kind: 'text', key: 'ServerAddress', label: t('settingsAdmin.fields.ServerAddress'), help: t('settingsAdmin.help.ServerAddress'), placeholder: 'https://gateway.example.com', url: true, wide: true }
        ]}
      />
      <FieldsCard
        id='worker'
        title={t('settingsAdmin.cards.worker')}
        description={t('settingsAdmin.cards.workerHelp')}
        fields={[
          { kind: 'text', key: 'WorkerUrl', label: t('settingsAdmin.fields.WorkerUrl'), help: t('settingsAdmin.help.WorkerUrl'), placeholder: 'https://worker.example.workers.dev', url: true },
          { kind: 'secret', key: 'WorkerValidKey', label: t('settingsAdmin.fields.WorkerValidKey') }
        ]}
      />
      <FieldsCard
        id='payment'
        title={t('settingsAdmin.cards.payment')}
        description={t('settingsAdmin.cards.paymentHelp')}
        check={() => server === '' ? t('settingsAdmin.payment.serverFirst') : undefined}
        fields={[
          { kind: 'text', key: 'PayAddress', label: t('settingsAdmin.fields.PayAddress'), placeholder: 'https://pay.example.com', url: true },
          { kind: 'text', key: 'EpayId', label: t('settingsAdmin.fields.EpayId') },
          { kind: 'secret', key: 'EpayKey', label: t('settingsAdmin.fields.EpayKey') },
          { kind: 'number', key: 'Price', label: t('settingsAdmin.fields.Price'), help: t('settingsAdmin.help.Price'), min: 0 },
          { kind: 'number', key: 'MinTopUp', label: t('settingsAdmin.fields.MinTopUp'), help: t('settingsAdmin.help.MinTopUp'), min: 0 },
          { kind: 'text', key: 'CustomCallbackAddress', label: t('settingsAdmin.fields.CustomCallbackAddress'), help: t('settingsAdmin.help.CustomCallbackAddress'), url: true },
          { kind: 'json', key: 'TopupGroupRatio', label: t('settingsAdmin.fields.TopupGroupRatio'), help: t('settingsAdmin.help.TopupGroupRatio'), rule: { shape: 'object', values: 'ratio' } }
        ]}
      />
      <FieldsCard
        id='stripe'
        title={t('settingsAdmin.cards.stripe')}
        description={`${t('settingsAdmin.cards.stripeHelp')} ${t('settingsAdmin.stripe.webhook', { url: `${base}/api/stripe/webhook` })}`}
        check={() => server === '' ? t('settingsAdmin.payment.serverFirst') : undefined}
        fields={[
          { kind: 'secret', key: 'StripeApiSecret', label: t('settingsAdmin.fields.StripeApiSecret') },
          { kind: 'secret', key: 'StripeWebhookSecret', label: t('settingsAdmin.fields.StripeWebhookSecret') },
          { kind: 'text', key: 'StripePriceId', label: t('settingsAdmin.fields.StripePriceId'), help: t('settingsAdmin.help.StripePriceId'), placeholder: 'price_...' },
          { kind: 'text', key: 'StripeCurrency', label: t('settingsAdmin.fields.StripeCurrency'), help: t('settingsAdmin.help.StripeCurrency'), placeholder: 'usd' },
          { kind: 'number', key: 'StripeUnitPrice', label: t('settingsAdmin.fields.StripeUnitPrice'), help: t('settingsAdmin.help.StripeUnitPrice'), min: 0 },
          { kind: 'number', key: 'StripeMinTopUp', label: t('settingsAdmin.fields.StripeMinTopUp'), min: 0, integer: true },
          { kind: 'text', key: 'StripeApiBase', label: t('settingsAdmin.fields.StripeApiBase'), help: t('settingsAdmin.help.StripeApiBase'), placeholder: 'https://api.stripe.com', url: true },
          { kind: 'switch', key: 'StripePromotionCodesEnabled', label: t('settingsAdmin.fields.StripePromotionCodesEnabled') },
          { kind: 'switch', key: 'StripeRefundDeductsQuota', label: t('settingsAdmin.fields.StripeRefundDeductsQuota'), help: t('settingsAdmin.help.StripeRefundDeductsQuota') }
        ]}
      />
      <FieldsCard
        id='creem'
        title={t('creem.settings.title')}
        description={`${t('creem.settings.help')} ${t('creem.settings.webhook', { url: `${base}/api/creem/webhook` })}`}
        check={() => server === '' ? t('settingsAdmin.payment.serverFirst') : undefined}
        fields={[
          { kind: 'secret', key: 'CreemApiKey', label: t('creem.settings.apiKey') },
          { kind: 'secret', key: 'CreemWebhookSecret', label: t('creem.settings.webhookSecret') },
          { kind: 'switch', key: 'CreemTestMode', label: t('creem.settings.testMode'), help: t('creem.settings.testModeHelp') },
          { kind: 'switch', key: 'CreemRefundDeductsQuota', label: t('creem.settings.refundDeducts'), help: t('creem.settings.refundDeductsHelp') },
          { kind: 'text', key: 'CreemApiBase', label: t('creem.settings.apiBase'), help: t('creem.settings.apiBaseHelp'), placeholder: 'https://api.creem.io', url: true },
          { kind: 'json', key: 'CreemProducts', label: t('creem.settings.products'), help: t('creem.settings.productsHelp'), rule: { shape: 'array' }, rows: 6, placeholder: '[{"name": "Starter", "productId": "prod_...", "price": 4.99, "currency": "USD", "quota": 500000}]' }
        ]}
      />
      <FieldsCard
        id='login'
        title={t('settingsAdmin.cards.login')}
        fields={[
          {
            kind: 'switch',
            key: 'PasswordLoginEnabled',
            label: t('settingsAdmin.fields.PasswordLoginEnabled'),
            confirmOff: { title: t('settingsAdmin.login.confirmTitle'), body: t('settingsAdmin.login.confirmBody'), action: t('settingsAdmin.login.confirmAction'), danger: true }
          },
          { kind: 'switch', key: 'PasswordRegisterEnabled', label: t('settingsAdmin.fields.PasswordRegisterEnabled') },
          { kind: 'switch', key: 'TwoFactorRequiredForAdmins', label: t('settingsAdmin.fields.TwoFactorRequiredForAdmins'), help: t('settingsAdmin.help.TwoFactorRequiredForAdmins') },
          { kind: 'switch', key: 'RegisterEnabled', label: t('settingsAdmin.fields.RegisterEnabled'), help: t('settingsAdmin.help.RegisterEnabled') },
          { kind: 'switch', key: 'EmailVerificationEnabled', label: t('settingsAdmin.fields.EmailVerificationEnabled'), help: t('settingsAdmin.help.EmailVerificationEnabled') },
          { kind: 'switch', key: 'EmailDomainRestrictionEnabled', label: t('settingsAdmin.fields.EmailDomainRestrictionEnabled'), help: t('settingsAdmin.help.EmailDomainRestrictionEnabled') },
          { kind: 'switch', key: 'EmailAliasRestrictionEnabled', label: t('settingsAdmin.fields.EmailAliasRestrictionEnabled'), help: t('settingsAdmin.help.EmailAliasRestrictionEnabled') },
          { kind: 'switch', key: 'GitHubOAuthEnabled', label: t('settingsAdmin.fields.GitHubOAuthEnabled') },
          { kind: 'switch', key: 'LinuxDOOAuthEnabled', label: t('settingsAdmin.fields.LinuxDOOAuthEnabled') },
          { kind: 'switch', key: 'WeChatAuthEnabled', label: t('settingsAdmin.fields.WeChatAuthEnabled') },
          { kind: 'switch', key: 'TelegramOAuthEnabled', label: t('settingsAdmin.fields.TelegramOAuthEnabled') },
          { kind: 'switch', key: 'TurnstileCheckEnabled', label: t('settingsAdmin.fields.TurnstileCheckEnabled') }
        ]}
      />
      <EmailWhitelistCard />
      <PasskeySettingsCard />
      <CustomOAuthProvidersCard />
      <FieldsCard
        id='smtp'
        title={t('settingsAdmin.cards.smtp')}
        description={t('settingsAdmin.cards.smtpHelp')}
        fields={[
          { kind: 'text', key: 'SMTPServer', label: t('settingsAdmin.fields.SMTPServer'), placeholder: 'smtp.example.com' },
          { kind: 'number', key: 'SMTPPort', label: t('settingsAdmin.fields.SMTPPort'), help: t('settingsAdmin.help.SMTPPort'), min: 1, max: 65535, integer: true },
          { kind: 'text', key: 'SMTPAccount', label: t('settingsAdmin.fields.SMTPAccount') },
          { kind: 'text', key: 'SMTPFrom', label: t('settingsAdmin.fields.SMTPFrom'), help: t('settingsAdmin.help.SMTPFrom') },
          { kind: 'secret', key: 'SMTPToken', label: t('settingsAdmin.fields.SMTPToken') },
          {
            kind: 'switch',
            key: 'SMTPSSLEnabled',
            label: t('settingsAdmin.fields.SMTPSSLEnabled'),
            // Port 465 speaks TLS from the first byte, so SSL is used there whatever the switch says.
            forced: (form) => form.value('SMTPPort').trim() === '465' ? true : undefined,
            help: t('settingsAdmin.help.SMTPSSLEnabled')
          }
        ]}
      />
      <FieldsCard
        id='github'
        title={t('settingsAdmin.cards.github')}
        description={callback('/oauth/github')}
        fields={[
          { kind: 'text', key: 'GitHubClientId', label: t('settingsAdmin.fields.GitHubClientId') },
          { kind: 'secret', key: 'GitHubClientSecret', label: t('settingsAdmin.fields.GitHubClientSecret') }
        ]}
      />
      <FieldsCard
        id='linuxdo'
        title={t('settingsAdmin.cards.linuxdo')}
        description={callback('/oauth/linuxdo')}
        fields={[
          { kind: 'text', key: 'LinuxDOClientId', label: t('settingsAdmin.fields.LinuxDOClientId') },
          { kind: 'secret', key: 'LinuxDOClientSecret', label: t('settingsAdmin.fields.LinuxDOClientSecret') }
        ]}
      />
      <FieldsCard
        id='wechat'
        title={t('settingsAdmin.cards.wechat')}
        description={t('settingsAdmin.cards.wechatHelp')}
        fields={[
          { kind: 'text', key: 'WeChatServerAddress', label: t('settingsAdmin.fields.WeChatServerAddress'), placeholder: 'https://wechat.example.com', url: true },
          { kind: 'secret', key: 'WeChatServerToken', label: t('settingsAdmin.fields.WeChatServerToken') },
          { kind: 'text', key: 'WeChatAccountQRCodeImageURL', label: t('settingsAdmin.fields.WeChatAccountQRCodeImageURL'), placeholder: 'https://', wide: true }
        ]}
      />
      <FieldsCard
        id='telegram'
        title={t('settingsAdmin.cards.telegram')}
        description={t('settingsAdmin.cards.telegramHelp')}
        fields={[
          { kind: 'secret', key: 'TelegramBotToken', label: t('settingsAdmin.fields.TelegramBotToken') },
          { kind: 'text', key: 'TelegramBotName', label: t('settingsAdmin.fields.TelegramBotName') }
        ]}
      />
      <FieldsCard
        id='turnstile'
        title={t('settingsAdmin.cards.turnstile')}
        description={t('settingsAdmin.cards.turnstileHelp')}
        fields={[
          { kind: 'text', key: 'TurnstileSiteKey', label: t('settingsAdmin.fields.TurnstileSiteKey') },
          { kind: 'secret', key: 'TurnstileSecretKey', label: t('settingsAdmin.fields.TurnstileSecretKey') }
        ]}
      />
    </Stack>
  )
}
