import Type, { type Static } from 'typebox'
import { ApiEnvelope } from './api.js'
import { PagingQuery } from './paging.js'

/** Redemption code status numbers (docs/domain.md). 3 is set by redeeming, never by an admin. */
export const REDEMPTION_STATUS = { unused: 1, disabled: 2, used: 3 } as const

/** Most codes one create call makes (docs/domain.md). */
export const REDEMPTION_BATCH_MAX = 100
/** Longest code name, in characters. */
export const REDEMPTION_NAME_MAX = 20
/** Quota of a new code when none is given (docs/domain.md). */
export const DEFAULT_REDEMPTION_QUOTA = 100_000

/** A redemption code as admins see it, key included (admins hand the codes out). */
export const RedemptionView = Type.Object({
  id: Type.Integer(),
  /** The admin who created it. */
  user_id: Type.Integer(),
  /** The 32-character code a user redeems. */
  key: Type.String(),
  name: Type.String(),
  /** 1 unused, 2 disabled, 3 used. */
  status: Type.Integer(),
  /** Quota units credited on redemption. */
  quota: Type.Integer(),
  /** Unix seconds. */
  created_time: Type.Integer(),
  /** Unix seconds; 0 while unused. */
  redeemed_time: Type.Integer(),
  /** Who redeemed it; 0 while unused. */
  used_user_id: Type.Integer()
})
export type RedemptionView = Static<typeof RedemptionView>

/** One page of codes, newest first. */
export const RedemptionPage = Type.Object({
  items: Type.Array(RedemptionView),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer()
})
export type RedemptionPage = Static<typeof RedemptionPage>

export const RedemptionResponse = ApiEnvelope(RedemptionView)
export const RedemptionPageResponse = ApiEnvelope(RedemptionPage)
/** `POST /api/redemption/`: the new codes, in creation order. */
export const RedemptionCreateResponse = ApiEnvelope(Type.Array(Type.String()))

export const RedemptionListQuery = Type.Object({
  ...PagingQuery.properties
})
export type RedemptionListQuery = Static<typeof RedemptionListQuery>

/** `GET /api/redemption/search`: a numeric keyword also matches the id; otherwise part of the name. */
export const RedemptionSearchQuery = Type.Object({
  ...RedemptionListQuery.properties,
  keyword: Type.Optional(Type.String({ maxLength: 100 }))
})
export type RedemptionSearchQuery = Static<typeof RedemptionSearchQuery>

// Lengths and ranges here only bound the input; the rules are checked with messages.
const nameField = Type.String({ maxLength: 200 })
const quotaField = Type.Integer()

/** `POST /api/redemption/`: an empty name becomes a description of the quota. */
export const RedemptionCreateBody = Type.Object({
  name: Type.Optional(nameField),
  /** Default 100000; at least 1. */
  quota: Type.Optional(quotaField),
  /** How many codes, 1 to 100 (default 1). */
  count: Type.Optional(Type.Integer())
})
export type RedemptionCreateBody = Static<typeof RedemptionCreateBody>

/**
 * `PUT /api/redemption/`: edits name and quota of an unused code. With `?status_only=true` only
 * `status` is read (1 enables, 2 disables).
 */
export const RedemptionUpdateBody = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  name: Type.Optional(nameField),
  quota: Type.Optional(quotaField),
  status: Type.Optional(Type.Integer())
})
export type RedemptionUpdateBody = Static<typeof RedemptionUpdateBody>

/** `POST /api/user/topup`: redeems a code. */
export const RedeemBody = Type.Object({ key: Type.String({ maxLength: 200 }) })
export type RedeemBody = Static<typeof RedeemBody>
/** The quota units added to the caller's balance. */
export const RedeemResponse = ApiEnvelope(Type.Integer())

/** Payment methods the wallet offers: Alipay and WeChat Pay. */
export const PaymentMethod = Type.Union([Type.Literal('zfb'), Type.Literal('wx')])
export type PaymentMethod = Static<typeof PaymentMethod>

/** `POST /api/user/amount`: `amount` is a whole number of top-up units (dollars). */
export const TopUpAmountBody = Type.Object({
  amount: Type.Integer({ minimum: 1, maximum: 10_000_000 }),
  /** Sent by the console; no promotion codes exist, so it changes nothing. */
  top_up_code: Type.Optional(Type.String({ maxLength: 200 }))
})
export type TopUpAmountBody = Static<typeof TopUpAmountBody>
/** The sum to pay, with two decimals (e.g. "21.90"). */
export const TopUpAmountResponse = ApiEnvelope(Type.String())

/** `POST /api/user/pay`. */
export const TopUpPayBody = Type.Object({
  ...TopUpAmountBody.properties,
  payment_method: PaymentMethod
})
export type TopUpPayBody = Static<typeof TopUpPayBody>

/**
 * `POST /api/user/pay`: `data` holds the signed epay form fields (pid, type, out_trade_no,
 * notify_url, return_url, name, money, sign, sign_type) that the console posts as a form to `url`.
 */
export const TopUpPayResponse = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  data: Type.Optional(Type.Record(Type.String(), Type.String())),
  url: Type.Optional(Type.String())
})
export type TopUpPayResponse = Static<typeof TopUpPayResponse>

/** `POST /api/user/stripe/amount`: a whole number of top-up units, at least StripeMinTopUp. */
export const StripeAmountBody = Type.Object({
  amount: Type.Integer({ minimum: 1, maximum: 10_000_000 })
})
export type StripeAmountBody = Static<typeof StripeAmountBody>

/** `POST /api/user/stripe/pay`. */
export const StripePayBody = Type.Object({
  amount: Type.Integer({ minimum: 1, maximum: 10_000_000 }),
  payment_method: Type.Literal('stripe')
})
export type StripePayBody = Static<typeof StripePayBody>

/** `POST /api/user/stripe/pay`: the Checkout page the browser is sent to. */
export const StripePayResponse = ApiEnvelope(Type.Object({ pay_link: Type.String() }))
export type StripePayResponse = Static<typeof StripePayResponse>
