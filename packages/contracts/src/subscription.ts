import Type, { type Static } from 'typebox'
import { ApiEnvelope } from './api.js'
import type { OptionValues } from './options.js'
import { PaymentMethod } from './redemption.js'

/**
 * Subscription plans (docs/domain.md, "Subscription plans"): a plan sells, for one period, a set
 * of entitlement items (an amount of one model, in quota units or in requests). Prices are integer
 * minor units in the database; the API speaks `price_amount`, a decimal in major units.
 */

/** How a user's requests are paid: by an entitlement item or by the wallet, in which order. */
export const BILLING_PREFERENCES = ['subscription_first', 'wallet_first', 'subscription_only', 'wallet_only'] as const
export type BillingPreference = typeof BILLING_PREFERENCES[number]
export const DEFAULT_BILLING_PREFERENCE: BillingPreference = 'subscription_first'

/**
 * A plan's price in quota units when paid from the wallet (a purchase or a renewal): its price in
 * minor units at QuotaPerUnit per major unit, rounded up to a whole unit (exact on integers when
 * QuotaPerUnit is whole).
 */
export function quotaPrice (options: OptionValues, plan: { price_minor: number }): number {
  const perUnit = options.num('QuotaPerUnit')
  if (Number.isInteger(perUnit) && perUnit >= 0) {
    const n = BigInt(plan.price_minor) * BigInt(perUnit)
    return Number((n + 99n) / 100n)
  }
  return Math.ceil(plan.price_minor * perUnit / 100)
}

/** Units of a plan's period; `custom` lasts `custom_seconds`. Months and years are calendar ones (UTC). */
export const DURATION_UNITS = ['year', 'month', 'week', 'day', 'hour', 'custom'] as const
export type DurationUnit = typeof DURATION_UNITS[number]

/** What an item's amounts count: quota units (0) or requests (1). */
export const QUOTA_TYPE = { quota: 0, requests: 1 } as const
export type QuotaType = typeof QUOTA_TYPE[keyof typeof QUOTA_TYPE]

export const SUBSCRIPTION_STATUSES = ['active', 'expired', 'cancelled'] as const
export type SubscriptionStatus = typeof SUBSCRIPTION_STATUSES[number]
export const SUBSCRIPTION_SOURCES = ['order', 'admin', 'renewal'] as const
export type SubscriptionSource = typeof SUBSCRIPTION_SOURCES[number]
export const SUBSCRIPTION_ORDER_STATUSES = ['pending', 'success', 'failed', 'expired', 'refunded'] as const

/** Bounds the API enforces on plans (with messages in both languages). */
export const PLAN_LIMITS = {
  titleMax: 128,
  durationValueMax: 1000,
  customSecondsMin: 60,
  itemsMin: 1,
  itemsMax: 50,
  amountTotalMax: Number.MAX_SAFE_INTEGER
} as const

/** A plan's fields as an admin sends them; ranges are checked by the service (clear messages). */
export const SubscriptionPlanInput = Type.Object({
  title: Type.String({ maxLength: 1000 }),
  subtitle: Type.Optional(Type.String({ maxLength: 2000 })),
  /** A decimal in major units with at most 2 decimals (9.99); a string of one is accepted too. */
  price_amount: Type.Union([Type.Number(), Type.String({ maxLength: 40 })]),
  currency: Type.Optional(Type.String({ maxLength: 16 })),
  duration_unit: Type.String({ maxLength: 16 }),
  duration_value: Type.Optional(Type.Number()),
  custom_seconds: Type.Optional(Type.Number()),
  enabled: Type.Optional(Type.Boolean()),
  sort_order: Type.Optional(Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000 })),
  stripe_price_id: Type.Optional(Type.String({ maxLength: 255 })),
  creem_product_id: Type.Optional(Type.String({ maxLength: 255 }))
})
export type SubscriptionPlanInput = Static<typeof SubscriptionPlanInput>

export const SubscriptionPlanItemInput = Type.Object({
  model_name: Type.String({ maxLength: 255 }),
  quota_type: Type.Number(),
  amount_total: Type.Number()
})
export type SubscriptionPlanItemInput = Static<typeof SubscriptionPlanItemInput>

/** `POST /api/subscription/admin/plans` and `PUT .../plans/:id`. */
export const SubscriptionPlanBody = Type.Object({
  plan: SubscriptionPlanInput,
  items: Type.Array(SubscriptionPlanItemInput, { maxItems: 500 })
})
export type SubscriptionPlanBody = Static<typeof SubscriptionPlanBody>

/** `PATCH /api/subscription/admin/plans/:id`. */
export const SubscriptionPlanEnabledBody = Type.Object({ enabled: Type.Boolean() })
export type SubscriptionPlanEnabledBody = Static<typeof SubscriptionPlanEnabledBody>

export const SubscriptionIdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) })
export type SubscriptionIdParams = Static<typeof SubscriptionIdParams>

const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 })

/** `POST /api/subscription/admin/bind`: one period of the plan, no payment. */
export const SubscriptionBindBody = Type.Object({ user_id: Id, plan_id: Id })
export type SubscriptionBindBody = Static<typeof SubscriptionBindBody>

/** `PUT /api/subscription/self/preference`; the value is checked by the service (clear message). */
export const BillingPreferenceBody = Type.Object({ billing_preference: Type.String({ maxLength: 64 }) })
export type BillingPreferenceBody = Static<typeof BillingPreferenceBody>

/** `PUT /api/subscription/self/:id/auto_renew`. */
export const AutoRenewBody = Type.Object({ auto_renew: Type.Boolean() })
export type AutoRenewBody = Static<typeof AutoRenewBody>

/** `POST /api/subscription/balance/pay`. */
export const SubscriptionBalancePayBody = Type.Object({ plan_id: Id })
export type SubscriptionBalancePayBody = Static<typeof SubscriptionBalancePayBody>

/** `POST /api/subscription/epay/pay`: answered like `POST /api/user/pay` (the signed form and `url`). */
export const SubscriptionEpayPayBody = Type.Object({ plan_id: Id, payment_method: PaymentMethod })
export type SubscriptionEpayPayBody = Static<typeof SubscriptionEpayPayBody>

/** A plan as the API shows it. Times are unix seconds. */
export const SubscriptionPlanView = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  subtitle: Type.String(),
  price_amount: Type.Number(),
  currency: Type.String(),
  duration_unit: Type.String(),
  duration_value: Type.Integer(),
  custom_seconds: Type.Integer(),
  enabled: Type.Boolean(),
  sort_order: Type.Integer(),
  stripe_price_id: Type.String(),
  creem_product_id: Type.String(),
  created_at: Type.Integer(),
  updated_at: Type.Integer()
})
export type SubscriptionPlanView = Static<typeof SubscriptionPlanView>

export const SubscriptionPlanItemView = Type.Object({
  id: Type.Integer(),
  plan_id: Type.Integer(),
  model_name: Type.String(),
  quota_type: Type.Integer(),
  amount_total: Type.Integer()
})
export type SubscriptionPlanItemView = Static<typeof SubscriptionPlanItemView>

export const SubscriptionPlanEntry = Type.Object({ plan: SubscriptionPlanView, items: Type.Array(SubscriptionPlanItemView) })
export type SubscriptionPlanEntry = Static<typeof SubscriptionPlanEntry>

/** How a plan may be paid, for the console. */
export const SubscriptionPayMethods = Type.Object({
  balance: Type.Boolean(),
  epay: Type.Boolean(),
  stripe: Type.Boolean(),
  creem: Type.Boolean()
})
export type SubscriptionPayMethods = Static<typeof SubscriptionPayMethods>

/** `GET /api/subscription/plans`: `quota_price` is the price in quota units for a wallet payment. */
export const SubscriptionPlanOffer = Type.Object({
  ...SubscriptionPlanEntry.properties,
  pay_methods: SubscriptionPayMethods,
  quota_price: Type.Integer()
})
export type SubscriptionPlanOffer = Static<typeof SubscriptionPlanOffer>

/** One period of a plan held by a user. */
export const UserSubscriptionView = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  plan_id: Type.Integer(),
  plan_title: Type.String(),
  start_time: Type.Integer(),
  end_time: Type.Integer(),
  status: Type.String(),
  source: Type.String(),
  auto_renew: Type.Boolean()
})
export type UserSubscriptionView = Static<typeof UserSubscriptionView>

export const UserSubscriptionItemView = Type.Object({
  id: Type.Integer(),
  model_name: Type.String(),
  quota_type: Type.Integer(),
  amount_total: Type.Integer(),
  amount_used: Type.Integer()
})
export type UserSubscriptionItemView = Static<typeof UserSubscriptionItemView>

export const UserSubscriptionEntry = Type.Object({ subscription: UserSubscriptionView, items: Type.Array(UserSubscriptionItemView) })
export type UserSubscriptionEntry = Static<typeof UserSubscriptionEntry>

/** `GET /api/subscription/self`. */
export const SubscriptionSelfView = Type.Object({
  billing_preference: Type.String(),
  subscriptions: Type.Array(UserSubscriptionEntry)
})
export type SubscriptionSelfView = Static<typeof SubscriptionSelfView>

export const SubscriptionPlanListResponse = ApiEnvelope(Type.Array(SubscriptionPlanEntry))
export const SubscriptionPlanEntryResponse = ApiEnvelope(SubscriptionPlanEntry)
export const SubscriptionPlanOfferListResponse = ApiEnvelope(Type.Array(SubscriptionPlanOffer))
export const UserSubscriptionEntryResponse = ApiEnvelope(UserSubscriptionEntry)
export const UserSubscriptionListResponse = ApiEnvelope(Type.Array(UserSubscriptionEntry))
export const SubscriptionSelfResponse = ApiEnvelope(SubscriptionSelfView)
export const BillingPreferenceResponse = ApiEnvelope(Type.Object({ billing_preference: Type.String() }))
export const UserSubscriptionResponse = ApiEnvelope(UserSubscriptionView)
