import type { CreatedTokenView, TOKEN_STATUS, TokenCreateBody, TokenUpdateBody, TokenView } from '@modelgate/contracts'
import { del, get, type Page, post, put } from '../../api/client'

/** What GET /api/user/self/groups maps each usable group to. */
export interface GroupInfo { desc: string, ratio: number }

/** A page of the user's tokens; with a name keyword or a key, the search endpoint. */
export async function listTokens (q: { page: number, size: number, keyword: string, key: string }): Promise<Page<TokenView>> {
  const query = { p: q.page, size: q.size }
  if (q.keyword.trim() === '' && q.key.trim() === '') return await get<Page<TokenView>>('/api/token/', query)
  return await get<Page<TokenView>>('/api/token/search', { ...query, keyword: q.keyword.trim(), token: q.key.trim() })
}

export async function getToken (id: number): Promise<TokenView> {
  return await get<TokenView>(`/api/token/${id}`)
}

/** The full `sk-...` key of one of the user's tokens. */
export async function revealKey (id: number): Promise<string> {
  return (await post<{ key: string }>(`/api/token/${id}/key`)).key
}

/** Creates one token or a batch; always answers a list (oldest first), each with its full key. */
export async function createTokens (body: TokenCreateBody): Promise<CreatedTokenView[]> {
  const created = await post<CreatedTokenView | CreatedTokenView[]>('/api/token/', body)
  return Array.isArray(created) ? created : [created]
}

export async function updateToken (body: TokenUpdateBody): Promise<TokenView> {
  return await put<TokenView>('/api/token/', body)
}

/** Enables (1) or disables (2); the server refuses to enable an expired or exhausted token. */
export async function setTokenStatus (id: number, status: typeof TOKEN_STATUS.enabled | typeof TOKEN_STATUS.disabled): Promise<TokenView> {
  return await put<TokenView>('/api/token/', { id, status }, { status_only: true })
}

export async function deleteToken (id: number): Promise<void> {
  await del(`/api/token/${id}/`)
}

/** Model names the user's group may call (for the model limit list). */
export async function userModels (): Promise<string[]> {
  return await get<string[]>('/api/user/models')
}

export async function userGroups (): Promise<Record<string, GroupInfo>> {
  return await get<Record<string, GroupInfo>>('/api/user/self/groups')
}
