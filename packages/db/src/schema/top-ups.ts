import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Online payment order. */
export interface TopUpsTable {
  id: Generated<number>
  user_id: number
  /** Dollars (top-up units) bought. */
  amount: number
  /** Payable sum in the payment currency, as a decimal string. */
  money: ColumnType<string, string | number, string | number>
  /** Quota credited on success. */
  quota: Generated<number>
  trade_no: string
  payment_method: string
  status: Generated<'pending' | 'success' | 'failed' | 'expired' | 'refunded'>
  create_time: Generated<number>
  complete_time: Generated<number>
  /** ISO 4217 code (lower case) of `money` for a `stripe` or `creem` order; null for epay orders. */
  currency: string | null
  /** The Stripe Checkout Session of a `stripe` order. */
  stripe_session_id: string | null
  /** The PaymentIntent of a paid `stripe` order: what refunds and disputes name. */
  stripe_payment_intent: string | null
  /** Unix seconds when a paid order was refunded (or its dispute lost); 0 otherwise. */
  refunded_at: Generated<number>
  /** The Creem checkout of a `creem` order (created with the trade number as request_id). */
  creem_checkout_id: string | null
  /** Creem's order id once the checkout is paid: what a refund names. */
  creem_order_id: string | null
}
export type TopUp = Selectable<TopUpsTable>
export type NewTopUp = Insertable<TopUpsTable>
export type TopUpUpdate = Updateable<TopUpsTable>
