// The shapes of /api/subscription (the contract in docs of the subscription work); money travels as
// `price_amount`, a decimal number in major units of `currency`.

export type DurationUnit = 'year' | 'month' | 'week' | 'day' | 'hour' | 'custom'
export const DURATION_UNITS: readonly DurationUnit[] = ['year', 'month', 'week', 'day', 'hour', 'custom']

/** 0: the amount is in quota units; 1: in requests. */
export type QuotaType = 0 | 1
export const QUOTA_TYPES: readonly QuotaType[] = [0, 1]

export type BillingPreference = 'subscription_first' | 'wallet_first' | 'subscription_only' | 'wallet_only'
export const BILLING_PREFERENCES: readonly BillingPreference[] = ['subscription_first', 'wallet_first', 'subscription_only', 'wallet_only']

export type SubscriptionStatus = 'active' | 'expired' | 'cancelled'

export interface Plan {
  id: number
  title: string
  subtitle: string
  /** Major units, at most two decimals (9.99). */
  price_amount: number
  /** ISO 4217, upper case. */
  currency: string
  duration_unit: DurationUnit
  duration_value: number
  custom_seconds: number
  enabled: boolean
  sort_order: number
  stripe_price_id: string
  creem_product_id: string
  created_at: number
  updated_at: number
}

export interface PlanItem {
  id: number
  plan_id: number
  model_name: string
  quota_type: QuotaType
  amount_total: number
}

export interface PlanEntry { plan: Plan, items: PlanItem[] }

/** What the signed-in user may pay a plan with. */
export interface PayMethods { balance: boolean, epay: boolean, stripe: boolean, creem: boolean }

/** A plan on offer: with its payment methods and its price in quota units (paid from the wallet). */
export interface OfferedPlan extends PlanEntry { pay_methods: PayMethods, quota_price: number }

/** What POST/PUT of a plan carries. */
export interface PlanBody {
  plan: Omit<Plan, 'id' | 'created_at' | 'updated_at'>
  items: Array<Pick<PlanItem, 'model_name' | 'quota_type' | 'amount_total'>>
}

/** One period of a plan held by a user. */
export interface UserSubscription {
  id: number
  user_id: number
  plan_id: number
  plan_title: string
  start_time: number
  end_time: number
  status: SubscriptionStatus
  source: 'order' | 'admin' | 'renewal'
  auto_renew: boolean
}

export interface SubscriptionItem {
  id: number
  model_name: string
  quota_type: QuotaType
  amount_total: number
  amount_used: number
}

export interface SubscriptionEntry { subscription: UserSubscription, items: SubscriptionItem[] }

export interface SelfSubscriptions { billing_preference: BillingPreference, subscriptions: SubscriptionEntry[] }
