import type { Generated, Insertable, Selectable } from 'kysely'

/** One Stripe webhook event already handled, by its event id (Stripe delivers at least once). */
export interface StripeEventsTable {
  /** Stripe's event id (`evt_...`). */
  id: string
  /** The event type, e.g. `checkout.session.completed`. */
  type: string
  /** Unix seconds. */
  created_at: Generated<number>
}
export type StripeEvent = Selectable<StripeEventsTable>
export type NewStripeEvent = Insertable<StripeEventsTable>
