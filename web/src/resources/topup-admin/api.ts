import type { TopUpStatus, TopUpView } from '@modelgate/contracts'
import { get, type Page, post } from '../../api/client'

/** The filters of the order list; blank ones do not filter. */
export interface TopUpOrderQuery {
  /** Part of a trade number or a username. */
  keyword: string
  status: TopUpStatus | ''
  user_id?: number
  /** Unix seconds, inclusive. */
  start_timestamp?: number
  /** Unix seconds, exclusive. */
  end_timestamp?: number
}

/** A page of every user's orders, newest first (admins). */
export async function listTopUpOrders (q: TopUpOrderQuery, page: number, pageSize: number): Promise<Page<TopUpView>> {
  return await get<Page<TopUpView>>('/api/user/topup', { ...q, p: page, page_size: pageSize })
}

/** Marks a pending order paid and credits it, as the provider's notification would. */
export async function completeTopUpOrder (tradeNo: string): Promise<TopUpView> {
  return await post<TopUpView>('/api/user/topup/complete', { trade_no: tradeNo })
}
