import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Online payment order. */
export interface TopUpsTable {
  id: Generated<number>
  user_id: number
  /** Dollars (top-up units) bought. */
  amount: number
  /** Payable sum in the payment currency, as a decimal string. */
  money: ColumnType<string, string | number, string | number>
  /** Quota credited on success. */
  quota: Generated<number>
  trade_no: string
  payment_method: string
  status: Generated<'pending' | 'success' | 'failed' | 'expired'>
  create_time: Generated<number>
  complete_time: Generated<number>
}
export type TopUp = Selectable<TopUpsTable>
export type NewTopUp = Insertable<TopUpsTable>
export type TopUpUpdate = Updateable<TopUpsTable>
