import type { Generated, Insertable, Selectable } from 'kysely'

/** Hourly usage per user and model for the dashboard. */
export interface QuotaDataTable {
  id: Generated<number>
  user_id: number
  username: Generated<string>
  model_name: string
  /** First second of the hour (unix seconds, multiple of 3600). */
  created_at: number
  token_used: Generated<number>
  count: Generated<number>
  quota: Generated<number>
}
export type QuotaData = Selectable<QuotaDataTable>
export type NewQuotaData = Insertable<QuotaDataTable>
