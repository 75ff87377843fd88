import type { LogType } from '@modelgate/contracts'
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'

/** Usage and audit log; partitioned by month on created_at. Rows are never updated. */
export interface LogsTable {
  id: Generated<number>
  /** Unix seconds; also the partition key. */
  created_at: number
  /** LOG_TYPE: topup, consume, manage, system, error or unknown. */
  type: Generated<LogType>
  user_id: Generated<number>
  username: Generated<string>
  token_id: Generated<number>
  token_name: Generated<string>
  model_name: Generated<string>
  channel_id: Generated<number>
  group: Generated<string>
  quota: Generated<number>
  prompt_tokens: Generated<number>
  completion_tokens: Generated<number>
  /** Seconds the request took. */
  use_time: Generated<number>
  is_stream: Generated<boolean>
  ip: Generated<string>
  /** Relay request id; with created_at, the settlement idempotency key. */
  request_id: string | null
  content: Generated<string>
  other: ColumnType<Record<string, unknown> | null, Record<string, unknown> | string | null | undefined, never>
}
export type Log = Selectable<LogsTable>
export type NewLog = Insertable<LogsTable>
