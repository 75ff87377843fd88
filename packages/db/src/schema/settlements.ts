import type { Generated, Insertable, Selectable } from 'kysely'

/** Idempotency record of one settled usage event. */
export interface SettlementsTable {
  request_id: string
  user_id: number
  quota: number
  settled_at: Generated<number>
}
export type Settlement = Selectable<SettlementsTable>
export type NewSettlement = Insertable<SettlementsTable>
