import type { RedemptionStatus } from '@modelgate/contracts'
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Redemption code worth `quota` units, redeemable once. */
export interface RedemptionsTable {
  id: Generated<number>
  /** Creator. */
  user_id: Generated<number>
  key: string
  name: Generated<string>
  /** REDEMPTION_STATUS: unused, disabled or used. */
  status: Generated<RedemptionStatus>
  quota: Generated<number>
  created_time: Generated<number>
  redeemed_time: Generated<number>
  /** 0 means not redeemed. */
  used_user_id: Generated<number>
  deleted_at: number | null
}
export type Redemption = Selectable<RedemptionsTable>
export type NewRedemption = Insertable<RedemptionsTable>
export type RedemptionUpdate = Updateable<RedemptionsTable>
