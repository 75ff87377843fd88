import { DEFAULT_AUDIO_COMPLETION_RATIO, DEFAULT_AUDIO_RATIO, DEFAULT_CACHE_RATIO, DEFAULT_COMPLETION_RATIO, DEFAULT_CREATE_CACHE_RATIO, DEFAULT_MODEL_PRICE, DEFAULT_MODEL_RATIO } from './ratios.js'

/**
 * Defaults of every option the super admin can set (docs/domain.md). Values are strings,
 * as stored in the options table; a stored row overrides its default.
 */
export const OPTION_DEFAULTS = {
  SystemName: 'ModelGate',
  Logo: '',
  Footer: '',
  Notice: '',
  About: '',
  HomePageContent: '',
  ServerAddress: '',
  WorkerUrl: '',
  WorkerValidKey: '',
  TopUpLink: '',
  ChatLink: '',
  ChatLink2: '',
  Chats: '[]',
  QuotaPerUnit: '500000',
  DisplayInCurrencyEnabled: 'true',
  DisplayTokenStatEnabled: 'true',
  DefaultCollapseSidebar: 'false',
  DrawingEnabled: 'true',
  TaskEnabled: 'true',
  MjNotifyEnabled: 'false',
  MjAccountFilterEnabled: 'false',
  MjForwardUrlEnabled: 'true',
  MjModeClearEnabled: 'false',
  MjActionCheckSuccessEnabled: 'true',
  DataExportEnabled: 'true',
  DataExportInterval: '5',
  DataExportDefaultTime: 'hour',
  PasswordLoginEnabled: 'true',
  TwoFactorRequiredForAdmins: 'false',
  PasskeyEnabled: 'false',
  PasskeyRPID: '',
  PasskeyOrigins: '',
  PasswordRegisterEnabled: 'true',
  RegisterEnabled: 'true',
  EmailVerificationEnabled: 'false',
  EmailDomainRestrictionEnabled: 'false',
  EmailAliasRestrictionEnabled: 'false',
  EmailDomainWhitelist: 'gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com',
  GitHubOAuthEnabled: 'false',
  GitHubClientId: '',
  GitHubClientSecret: '',
  LinuxDOOAuthEnabled: 'false',
  LinuxDOClientId: '',
  LinuxDOClientSecret: '',
  WeChatAuthEnabled: 'false',
  WeChatServerAddress: '',
  WeChatServerToken: '',
  WeChatAccountQRCodeImageURL: '',
  TelegramOAuthEnabled: 'false',
  TelegramBotToken: '',
  TelegramBotName: '',
  TurnstileCheckEnabled: 'false',
  TurnstileSiteKey: '',
  TurnstileSecretKey: '',
  SMTPServer: '',
  SMTPPort: '587',
  SMTPAccount: '',
  SMTPFrom: '',
  SMTPToken: '',
  SMTPSSLEnabled: 'false',
  PayAddress: '',
  CustomCallbackAddress: '',
  EpayId: '',
  EpayKey: '',
  Price: '7.3',
  MinTopUp: '1',
  TopupGroupRatio: '{}',
  /** Stripe Checkout top-up (new-api's names): on once the secret key and webhook secret are set. */
  StripeApiSecret: '',
  StripeWebhookSecret: '',
  /** A Stripe Price to sell (quantity = units); empty: the sum is sent as price_data. */
  StripePriceId: '',
  /** Price of one top-up unit in the currency's major unit (decimal). */
  StripeUnitPrice: '8.0',
  StripeMinTopUp: '1',
  StripePromotionCodesEnabled: 'false',
  /** ISO 4217 code, lower case. */
  StripeCurrency: 'usd',
  /** Empty: Stripe's own API; else an http(s) base URL (a stand-in or a proxy). */
  StripeApiBase: '',
  /** Whether a refund (or a lost dispute) takes the credited quota back. */
  StripeRefundDeductsQuota: 'true',
  /**
   * Creem top-up (new-api's names): on once the API key, the webhook secret and at least one
   * product are set. Each product credits its `quota` when paid.
   */
  CreemApiKey: '',
  CreemWebhookSecret: '',
  /** Creem's test API (https://test-api.creem.io) instead of the live one. */
  CreemTestMode: 'false',
  /** JSON array of top-up products: {name, productId, price, currency, quota}, price in major units. */
  CreemProducts: '[]',
  /** Empty: Creem's own API (by CreemTestMode); else an http(s) base URL (a stand-in or a proxy). */
  CreemApiBase: '',
  /** Whether a refund takes the credited quota back. */
  CreemRefundDeductsQuota: 'true',
  RetryTimes: '0',
  ModelRequestRateLimitEnabled: 'false',
  ModelRequestRateLimitDurationMinutes: '1',
  ModelRequestRateLimitCount: '0',
  ModelRequestRateLimitSuccessCount: '1000',
  QuotaForNewUser: '0',
  QuotaForInviter: '0',
  QuotaForInvitee: '0',
  /** new-api's daily check-in: off by default; each check-in credits a uniform draw from min to max quota units. */
  'checkin_setting.enabled': 'false',
  'checkin_setting.min_quota': '1000',
  'checkin_setting.max_quota': '10000',
  PreConsumedQuota: '500',
  QuotaRemindThreshold: '1000',
  ChannelDisableThreshold: '5',
  AutomaticDisableChannelEnabled: 'true',
  AutomaticEnableChannelEnabled: 'false',
  LogConsumeEnabled: 'true',
  /** new-api's: also log (quota 0) the relay requests refused once the caller is known. */
  ErrorLogEnabled: 'false',
  LogRetentionDays: '0',
  AuditLogRetentionDays: '365',
  CheckSensitiveEnabled: 'false',
  CheckSensitiveOnPromptEnabled: 'false',
  SensitiveWords: '',
  GroupRatio: '{"default":1,"vip":1,"svip":1}',
  UserUsableGroups: '{"default":"default","vip":"vip"}',
  ModelRatio: JSON.stringify(DEFAULT_MODEL_RATIO),
  CompletionRatio: JSON.stringify(DEFAULT_COMPLETION_RATIO),
  ModelPrice: JSON.stringify(DEFAULT_MODEL_PRICE),
  CacheRatio: JSON.stringify(DEFAULT_CACHE_RATIO),
  CreateCacheRatio: JSON.stringify(DEFAULT_CREATE_CACHE_RATIO),
  AudioRatio: JSON.stringify(DEFAULT_AUDIO_RATIO),
  AudioCompletionRatio: JSON.stringify(DEFAULT_AUDIO_COMPLETION_RATIO)
} as const satisfies Record<string, string>

export type OptionKey = keyof typeof OPTION_DEFAULTS

/** Options whose values are credentials: the API says only whether they are set. */
export const SECRET_OPTIONS: ReadonlySet<OptionKey> = new Set<OptionKey>([
  'SMTPToken', 'GitHubClientSecret', 'LinuxDOClientSecret', 'EpayKey', 'TelegramBotToken',
  'WorkerValidKey', 'TurnstileSecretKey', 'WeChatServerToken', 'StripeApiSecret', 'StripeWebhookSecret',
  'CreemApiKey', 'CreemWebhookSecret'
])


/** Options are read through this view: stored values over defaults, with typed getters. */
export class OptionValues {
  readonly #stored: ReadonlyMap<string, string>

  constructor (stored: ReadonlyMap<string, string>) {
    this.#stored = stored
  }

  str (key: OptionKey): string {
    return this.#stored.get(key) ?? OPTION_DEFAULTS[key]
  }

  bool (key: OptionKey): boolean {
    return this.str(key) === 'true'
  }

  /** A number, or the default when the stored text is not numeric. */
  num (key: OptionKey): number {
    const n = Number(this.str(key))
    return Number.isFinite(n) ? n : Number(OPTION_DEFAULTS[key])
  }

  /** Parsed JSON, or the parsed default when the stored text is not valid JSON. */
  json (key: OptionKey): unknown {
    try {
      return JSON.parse(this.str(key))
    } catch {
      return JSON.parse(OPTION_DEFAULTS[key])
    }
  }
}
