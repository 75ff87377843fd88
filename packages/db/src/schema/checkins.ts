import type { Generated, Insertable, Selectable } from 'kysely'

/** One daily check-in of a user: at most one per user and day (unique `user_id, checkin_date`). */
export interface CheckinsTable {
  id: Generated<number>
  user_id: number
  /** The day of the check-in, 'YYYY-MM-DD' (UTC). */
  checkin_date: string
  /** Quota units credited by this check-in. */
  quota_awarded: number
  /** Unix seconds. */
  created_at: Generated<number>
}
export type Checkin = Selectable<CheckinsTable>
export type NewCheckin = Insertable<CheckinsTable>
