import type { Generated, Insertable, Selectable, Updateable } from 'kysely'
import type { TaskBillingColumns } from './tasks.js'

/** Midjourney-style drawing task. */
export interface MidjourneysTable extends TaskBillingColumns {
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
  updated_at: Generated<number>
}
export type Midjourney = Selectable<MidjourneysTable>
export type NewMidjourney = Insertable<MidjourneysTable>
export type MidjourneyUpdate = Updateable<MidjourneysTable>
