import type { REDEMPTION_STATUS, RedemptionCreateBody, RedemptionUpdateBody, RedemptionView } from '@modelgate/contracts'
import { del, get, type Page, post, put } from '../../api/client'

/** A page of codes, newest first; a keyword (an id, or part of a name) uses the search endpoint. */
export async function listRedemptions (q: { page: number, size: number, keyword: string }): Promise<Page<RedemptionView>> {
  const query = { p: q.page, page_size: q.size }
  const keyword = q.keyword.trim()
  if (keyword === '') return await get<Page<RedemptionView>>('/api/redemption/', query)
  return await get<Page<RedemptionView>>('/api/redemption/search', { ...query, keyword })
}

export async function getRedemption (id: number): Promise<RedemptionView> {
  return await get<RedemptionView>(`/api/redemption/${id}`)
}

/** Creates `count` codes; answers the codes in creation order. */
export async function createRedemptions (body: RedemptionCreateBody): Promise<string[]> {
  return await post<string[]>('/api/redemption/', body)
}

export async function updateRedemption (body: RedemptionUpdateBody): Promise<RedemptionView> {
  return await put<RedemptionView>('/api/redemption/', body)
}

/** 1 enables, 2 disables; a used code is refused by the server. */
export async function setRedemptionStatus (id: number, status: typeof REDEMPTION_STATUS.unused | typeof REDEMPTION_STATUS.disabled): Promise<RedemptionView> {
  return await put<RedemptionView>('/api/redemption/', { id, status }, { status_only: true })
}

export async function deleteRedemption (id: number): Promise<void> {
  await del(`/api/redemption/${id}/`)
}
