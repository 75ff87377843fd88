import Type, { type Static } from 'typebox'
import { ApiEnvelope } from './api.js'
import { PagingQuery } from './paging.js'

/**
 * Statuses of an online payment order: created `pending`, then `success` once paid, `refunded`
 * when a paid Stripe or Creem order is refunded (or a Stripe dispute lost) (docs/domain.md).
 */
export const TOP_UP_STATUSES = ['pending', 'success', 'failed', 'expired', 'refunded'] as const
export const TopUpStatus = Type.Union([Type.Literal('pending'), Type.Literal('success'), Type.Literal('failed'), Type.Literal('expired'), Type.Literal('refunded')])
export type TopUpStatus = Static<typeof TopUpStatus>

/** An online payment order. */
export const TopUpView = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  /** The payer's username; '' when the account is gone. */
  username: Type.String(),
  /** Top-up units (dollars) bought. */
  amount: Type.Integer(),
  /** The sum paid, a decimal string with two decimals ("21.90"). */
  money: Type.String(),
  /** Quota units credited when paid. */
  quota: Type.Integer(),
  trade_no: Type.String(),
  /** The provider's method: `alipay`, `wxpay`, `stripe`, `creem`. */
  payment_method: Type.String(),
  status: TopUpStatus,
  /** Unix seconds. */
  create_time: Type.Integer(),
  /** Unix seconds; 0 while not paid. */
  complete_time: Type.Integer()
})
export type TopUpView = Static<typeof TopUpView>

/** One page of orders, newest first. */
export const TopUpPage = Type.Object({
  items: Type.Array(TopUpView),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer()
})
export type TopUpPage = Static<typeof TopUpPage>
export const TopUpPageResponse = ApiEnvelope(TopUpPage)

// The console sends every filter, blank ones as empty strings.
const seconds = Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Literal('')]))

/** `GET /api/user/topup/self`: the caller's own orders. */
export const TopUpSelfQuery = Type.Object({
  ...PagingQuery.properties,
  /** Part of the trade number. */
  keyword: Type.Optional(Type.String({ maxLength: 100 })),
  status: Type.Optional(Type.Union([TopUpStatus, Type.Literal('')])),
  /** Unix seconds on the creation time, inclusive. */
  start_timestamp: seconds,
  /** Unix seconds, exclusive. */
  end_timestamp: seconds
})
export type TopUpSelfQuery = Static<typeof TopUpSelfQuery>

/** `GET /api/user/topup` (admins): every user's orders; `keyword` is part of a trade number or a username. */
export const TopUpListQuery = Type.Object({
  ...TopUpSelfQuery.properties,
  user_id: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('')]))
})
export type TopUpListQuery = Static<typeof TopUpListQuery>

/** `POST /api/user/topup/complete` (admins): marks a pending order paid and credits it. */
export const TopUpCompleteBody = Type.Object({ trade_no: Type.String({ minLength: 1, maxLength: 200 }) })
export type TopUpCompleteBody = Static<typeof TopUpCompleteBody>
export const TopUpCompleteResponse = ApiEnvelope(TopUpView)

/** `POST /api/user/creem/pay`: buys one of the CreemProducts (new-api's body). */
export const CreemPayBody = Type.Object({
  product_id: Type.String({ minLength: 1, maxLength: 200 }),
  payment_method: Type.Literal('creem')
})
export type CreemPayBody = Static<typeof CreemPayBody>

/** `POST /api/user/creem/pay` and `/api/subscription/creem/pay`: Creem's checkout page the browser is sent to. */
export const CreemPayResponse = ApiEnvelope(Type.Object({
  checkout_url: Type.String(),
  /** The same page, under the name the Stripe answer uses. */
  pay_link: Type.String()
}))
export type CreemPayResponse = Static<typeof CreemPayResponse>

/** `POST /api/subscription/creem/pay`: buys a subscription plan through the plan's Creem product. */
export const CreemPlanPayBody = Type.Object({
  plan_id: Type.Integer({ minimum: 1 })
})
export type CreemPlanPayBody = Static<typeof CreemPlanPayBody>

/** A Creem top-up product as the wallet shows it: never the API key, only what the buyer sees. */
export const CreemProductView = Type.Object({
  /** The product's id at Creem: what `POST /api/user/creem/pay` names. */
  product_id: Type.String(),
  name: Type.String(),
  /** The price in the currency's major unit (4.99). */
  price: Type.Number(),
  /** ISO 4217 code, upper case (Creem's). */
  currency: Type.String(),
  /** Quota units credited when paid. */
  quota: Type.Integer()
})
export type CreemProductView = Static<typeof CreemProductView>

/** What `GET /api/status` adds about Creem top-up. */
export const CreemStatusFields = Type.Object({
  /** Creem top-up is configured (API key, webhook secret, products, server address). */
  enable_creem_topup: Type.Boolean(),
  /** The products on sale; empty while Creem is not configured. */
  creem_products: Type.Array(CreemProductView)
})
export type CreemStatusFields = Static<typeof CreemStatusFields>
