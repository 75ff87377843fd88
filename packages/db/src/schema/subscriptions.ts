import type { DurationUnit, QuotaType, SubscriptionSource, SubscriptionStatus } from '@modelgate/contracts'
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

/** A plan users can buy. Times are unix seconds. */
export interface SubscriptionPlansTable {
  id: Generated<number>
  title: string
  subtitle: Generated<string>
  /** The price in minor units of `currency` (cents; whole units for zero-decimal currencies). */
  price_minor: number
  /** ISO 4217 code, upper case. */
  currency: Generated<string>
  duration_unit: DurationUnit
  duration_value: Generated<number>
  custom_seconds: Generated<number>
  enabled: Generated<boolean>
  sort_order: Generated<number>
  stripe_price_id: Generated<string>
  creem_product_id: Generated<string>
  created_at: Generated<number>
  updated_at: Generated<number>
}
export type SubscriptionPlan = Selectable<SubscriptionPlansTable>
export type NewSubscriptionPlan = Insertable<SubscriptionPlansTable>
export type SubscriptionPlanUpdate = Updateable<SubscriptionPlansTable>

/** One entitlement of a plan: `amount_total` of `model_name` per period. */
export interface SubscriptionPlanItemsTable {
  id: Generated<number>
  plan_id: number
  model_name: string
  quota_type: Generated<QuotaType>
  amount_total: number
}
export type SubscriptionPlanItem = Selectable<SubscriptionPlanItemsTable>

/** One payment for a plan; a paid order creates one user subscription. */
export interface SubscriptionOrdersTable {
  id: Generated<number>
  user_id: number
  plan_id: number
  price_minor: number
  currency: string
  trade_no: string
  /** 'balance', 'epay' (and its pay type), 'stripe', 'creem'. */
  payment_method: string
  status: Generated<'pending' | 'success' | 'failed' | 'expired' | 'refunded'>
  create_time: Generated<number>
  complete_time: Generated<number>
  /** The payment provider's reference (checkout session, epay trade number). */
  provider_ref: string | null
}
export type SubscriptionOrder = Selectable<SubscriptionOrdersTable>

/** One period of a plan held by a user. */
export interface UserSubscriptionsTable {
  id: Generated<number>
  user_id: number
  plan_id: number
  /** The plan's title when the period began (log rows and history keep naming it). */
  plan_title: string
  start_time: number
  end_time: number
  status: Generated<SubscriptionStatus>
  source: SubscriptionSource
  /** Renewed from the wallet at `end_time` when the balance covers the plan's price. */
  auto_renew: Generated<boolean>
  order_id: number | null
  /** The period this one continues (a renewal); unique, so a period is renewed once. */
  renewed_from: number | null
  created_at: Generated<number>
  updated_at: Generated<number>
}
export type UserSubscription = Selectable<UserSubscriptionsTable>

/** A user's entitlement for one period: what requests for `model_name` may draw on. */
export interface UserSubscriptionItemsTable {
  id: Generated<number>
  user_subscription_id: number
  user_id: number
  model_name: string
  quota_type: QuotaType
  amount_total: number
  amount_used: Generated<number>
}
export type UserSubscriptionItem = Selectable<UserSubscriptionItemsTable>
