import type { Generated, Insertable, Selectable } from 'kysely'

/** One Creem webhook event already handled, by its event id (Creem retries deliveries). */
export interface CreemEventsTable {
  /** Creem's event id (`evt_...`). */
  id: string
  /** The event type, e.g. `checkout.completed`. */
  type: string
  /** Unix seconds. */
  created_at: Generated<number>
}
export type CreemEvent = Selectable<CreemEventsTable>
export type NewCreemEvent = Insertable<CreemEventsTable>
