import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

/** What billing needs of an asynchronous task, in both task tables. */
export interface TaskBillingColumns {
  /** Who pays and what was charged. */
  token_id: Generated<number>
  token_name: Generated<string>
  unlimited_token: Generated<boolean>
  username: Generated<string>
  model_name: Generated<string>
  group: Generated<string>
  /** Request id of the charge's usage event. */
  request_id: Generated<string>
  /** Unix seconds of the refund; 0 while not refunded. */
  refunded_at: Generated<number>
  /** The subscription's entitlement item that paid (a refund goes back to it); null: the wallet. */
  subscription_item_id: Generated<number | null>
  /** Unix ms until which one poller holds the task. */
  lease_until: Generated<number>
}

/** Asynchronous (Suno-style or video) task. */
export interface TasksTable extends TaskBillingColumns {
  id: Generated<number>
  task_id: string
  platform: string
  user_id: number
  channel_id: Generated<number>
  quota: Generated<number>
  action: Generated<string>
  /** NOT_START, SUBMITTED, QUEUED, IN_PROGRESS, SUCCESS, FAILURE, UNKNOWN; empty while submitting. */
  status: Generated<string>
  fail_reason: Generated<string>
  /** Unix seconds, like start_time and finish_time. */
  submit_time: Generated<number>
  start_time: Generated<number>
  finish_time: Generated<number>
  progress: Generated<string>
  properties: unknown
  data: unknown
  created_at: Generated<number>
  updated_at: Generated<number>
  /** Unix seconds when the owner deleted the output through the API; 0 while not deleted. */
  deleted_at: Generated<number>
}
export type Task = Selectable<TasksTable>
export type NewTask = Insertable<TasksTable>
export type TaskUpdate = Updateable<TasksTable>
