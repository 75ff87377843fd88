import type { UserView } from '@modelgate/contracts'
import { get, type Page, post, put } from '../../api/client'

export type ManageAction = 'promote' | 'demote' | 'disable' | 'enable' | 'delete'

/** What POST /api/user/manage answers: the user's state after the action. */
export interface ManageResult { status: number, role: number, deleted: boolean }

/** A page of the users the caller outranks (and the caller); with a keyword, the search endpoint. */
export async function listUsers (q: { page: number, size: number, keyword: string }): Promise<Page<UserView>> {
  const query = { p: q.page, page_size: q.size }
  const keyword = q.keyword.trim()
  if (keyword === '') return await get<Page<UserView>>('/api/user/', query)
  return await get<Page<UserView>>('/api/user/search', { ...query, keyword })
}

export async function getUser (id: number): Promise<UserView> {
  return await get<UserView>(`/api/user/${id}`)
}

export async function createUser (body: { username: string, display_name: string, password: string }): Promise<UserView> {
  return await post<UserView>('/api/user/', body)
}

/**
 * Saves an edit. `quota` (absolute) is sent only when the admin changed it; `quota_delta` is added
 * on the server in one statement, so spending between loading the form and saving is not lost.
 */
export async function updateUser (body: {
  id: number
  username: string
  display_name: string
  password?: string
  group: string
  quota?: number
  quota_delta?: number
  /** Requests in flight at once across all gateways; 0 for no limit. */
  concurrency_limit: number
}): Promise<UserView> {
  return await put<UserView>('/api/user/', body)
}

export async function manageUser (id: number, action: ManageAction): Promise<ManageResult> {
  return await post<ManageResult>('/api/user/manage', { id, action })
}

/** Group names an admin may assign (the keys of GroupRatio). */
export async function groupNames (): Promise<string[]> {
  return await get<string[]>('/api/group/')
}
