import type { AbilitiesTable } from './abilities.js'
import type { AuditLogsTable } from './audit-logs.js'
import type { ChannelsTable } from './channels.js'
import type { CreemEventsTable } from './creem-events.js'
import type { CheckinsTable } from './checkins.js'
import type { CustomOAuthLinksTable, CustomOAuthProvidersTable } from './custom-oauth.js'
import type { LogsTable } from './logs.js'
import type { MidjourneysTable } from './midjourneys.js'
import type { OptionsTable } from './options.js'
import type { PasskeysTable } from './passkeys.js'
import type { QuotaDataTable } from './quota-data.js'
import type { RedemptionsTable } from './redemptions.js'
import type { SettlementsTable } from './settlements.js'
import type { StripeEventsTable } from './stripe-events.js'
import type { SubscriptionOrdersTable, SubscriptionPlanItemsTable, SubscriptionPlansTable, UserSubscriptionItemsTable, UserSubscriptionsTable } from './subscriptions.js'
import type { TasksTable } from './tasks.js'
import type { TokensTable } from './tokens.js'
import type { TopUpsTable } from './top-ups.js'
import type { TwoFactorAuthTable, TwoFactorBackupCodesTable } from './two-factor.js'
import type { UserSessionsTable } from './user-sessions.js'
import type { UsersTable } from './users.js'

export type * from './abilities.js'
export type * from './audit-logs.js'
export type * from './channels.js'
export type * from './creem-events.js'
export type * from './checkins.js'
export type * from './custom-oauth.js'
export type * from './logs.js'
export type * from './midjourneys.js'
export type * from './options.js'
export type * from './passkeys.js'
export type * from './quota-data.js'
export type * from './redemptions.js'
export type * from './stripe-events.js'
export type * from './settlements.js'
export type * from './subscriptions.js'
export type * from './tasks.js'
export type * from './tokens.js'
export type * from './top-ups.js'
export type * from './two-factor.js'
export type * from './users.js'
export type * from './user-sessions.js'

/** The whole database, as Kysely sees it. */
export interface Database {
  users: UsersTable
  tokens: TokensTable
  channels: ChannelsTable
  abilities: AbilitiesTable
  redemptions: RedemptionsTable
  logs: LogsTable
  options: OptionsTable
  top_ups: TopUpsTable
  midjourneys: MidjourneysTable
  tasks: TasksTable
  quota_data: QuotaDataTable
  settlements: SettlementsTable
  audit_logs: AuditLogsTable
  two_factor_auth: TwoFactorAuthTable
  two_factor_backup_codes: TwoFactorBackupCodesTable
  user_sessions: UserSessionsTable
  custom_oauth_providers: CustomOAuthProvidersTable
  custom_oauth_links: CustomOAuthLinksTable
  passkeys: PasskeysTable
  checkins: CheckinsTable
  stripe_events: StripeEventsTable
  creem_events: CreemEventsTable
  subscription_plans: SubscriptionPlansTable
  subscription_plan_items: SubscriptionPlanItemsTable
  subscription_orders: SubscriptionOrdersTable
  user_subscriptions: UserSubscriptionsTable
  user_subscription_items: UserSubscriptionItemsTable
}
