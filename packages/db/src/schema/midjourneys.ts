import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Midjourney-style drawing task. */
export interface MidjourneysTable {
  id: Generated<number>
  /** Submit result: 1 submitted, 21 waiting, 22 duplicate, 0 not submitted. */
  code: Generated<number>
  user_id: number
  action: Generated<string>
  mj_id: Generated<string>
  prompt: Generated<string>
  prompt_en: Generated<string>
  description: Generated<string>
  state: Generated<string>
  /** Unix seconds, like start_time and finish_time. */
  submit_time: Generated<number>
  start_time: Generated<number>
  finish_time: Generated<number>
  image_url: Generated<string>
  /** NOT_START, SUBMITTED, IN_PROGRESS, MODAL, SUCCESS, FAILURE. */
  status: Generated<string>
  progress: Generated<string>
  fail_reason: Generated<string>
  channel_id: Generated<number>
  quota: Generated<number>
  buttons: unknown
  properties: unknown
  /** Who pays and what was charged (see the task billing migration). */
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
  /** Unix ms until which one poller holds the task. */
  lease_until: Generated<number>
  updated_at: Generated<number>
}
export type Midjourney = Selectable<MidjourneysTable>
export type NewMidjourney = Insertable<MidjourneysTable>
export type MidjourneyUpdate = Updateable<MidjourneysTable>
