import type {
  CHANNEL_STATUS,
  ChannelBalancesResult,
  ChannelCreateBody,
  ChannelDetail,
  ChannelKeyView,
  ChannelListItem,
  ChannelPage,
  ChannelTagBody,
  ChannelTagRow,
  ChannelUpdateBody,
  ChannelView
} from '@modelgate/contracts'
import { del, get, post, put, requestEnvelope } from '../../api/client'

/** The statuses an admin sets by hand (the automatic one is the relay's). */
type ManualStatus = typeof CHANNEL_STATUS.enabled | typeof CHANNEL_STATUS.disabled

export interface ChannelQuery {
  page: number
  size: number
  idSort: boolean
  tagMode: boolean
  keyword: string
  model: string
  group: string
}

/** A list row is a tag row (tag mode) when it carries children. */
export function isTagRow (item: ChannelListItem): item is ChannelTagRow {
  return 'children' in item
}

/** A page of channels (or tag rows); with a keyword, model or group, the search endpoint. */
export async function listChannels (q: ChannelQuery): Promise<ChannelPage> {
  const query = { p: q.page, page_size: q.size, id_sort: q.idSort, tag_mode: q.tagMode }
  const keyword = q.keyword.trim()
  const model = q.model.trim()
  const group = q.group.trim()
  if (keyword === '' && model === '' && group === '') return await get<ChannelPage>('/api/channel/', query)
  return await get<ChannelPage>('/api/channel/search', { ...query, keyword, model, group })
}

/** One channel, with its key's hint (keys are write-only: never the key). */
export async function getChannel (id: number): Promise<ChannelDetail> {
  return await get<ChannelDetail>(`/api/channel/${id}`)
}

/**
 * The stored key of a channel, one credential per line (the super admin only, after a fresh
 * verification: the answer's refusal then asks for it). Each call is audited and rate-limited.
 */
export async function revealChannelKey (id: number): Promise<string> {
  return (await post<{ key: string }>(`/api/channel/${id}/key`)).key
}

/** A new channel with the settings and keys of channel `id`, named with `suffix` added; the keys stay on the server. */
export async function copyChannel (id: number, suffix: string): Promise<ChannelView> {
  return await post<ChannelView>(`/api/channel/copy/${id}`, {}, { suffix })
}

/** Creates one channel, or (batch) one per key line; the created channels in order. */
export async function createChannels (body: ChannelCreateBody): Promise<ChannelView[]> {
  return await post<ChannelView[]>('/api/channel/', body)
}

export async function updateChannel (body: ChannelUpdateBody): Promise<ChannelView> {
  return await put<ChannelView>('/api/channel/', body)
}

/** The list's inline edits: status, priority or weight alone. */
export async function patchChannel (id: number, change: { status: ManualStatus } | { priority: number } | { weight: number }): Promise<ChannelView> {
  return await put<ChannelView>('/api/channel/', { id, ...change })
}

export async function deleteChannel (id: number): Promise<void> {
  await del(`/api/channel/${id}/`)
}

/** Deletes every disabled and auto-disabled channel; how many went. */
export async function deleteDisabledChannels (): Promise<number> {
  return await del<number>('/api/channel/disabled')
}

/** Rebuilds the routing data of every channel; how many channels. */
export async function fixChannels (): Promise<number> {
  return await post<number>('/api/channel/fix')
}

/** Tests one channel now; `time` in seconds. A failed test throws with the upstream's reason. */
export async function testChannel (id: number, model?: string): Promise<{ message: string, time: number }> {
  const answer = await requestEnvelope<never>('GET', `/api/channel/test/${id}`, { query: { model } })
  return { message: answer.message, time: typeof answer.time === 'number' ? answer.time : 0 }
}

/** Tests one key of a multi-key channel (0-based index); the server's message. A failed test throws with it. */
export async function testChannelKey (id: number, index: number): Promise<string> {
  return (await requestEnvelope<never>('GET', `/api/channel/test/${id}`, { query: { key_index: index } })).message
}

/** The keys of a channel, masked, with their states, in key-line order. */
export async function listChannelKeys (id: number): Promise<ChannelKeyView[]> {
  return await get<ChannelKeyView[]>(`/api/channel/${id}/keys`)
}

/** Enables (1) or disables (2) one key of a channel by its fingerprint; the keys after the change and the server's message. */
export async function setChannelKeyStatus (id: number, fingerprint: string, status: ManualStatus): Promise<{ keys: ChannelKeyView[], message: string }> {
  const answer = await requestEnvelope<ChannelKeyView[]>('PUT', `/api/channel/${id}/keys`, { body: { fingerprint, status } })
  return { keys: answer.data ?? [], message: answer.message }
}

/** Starts testing every channel in the background; the server's message. */
export async function testAllChannels (): Promise<string> {
  return (await requestEnvelope<null>('GET', '/api/channel/test')).message
}

/** Overwrites the given fields on every channel of a tag; how many changed. */
export async function editTag (body: ChannelTagBody): Promise<number> {
  return await put<number>('/api/channel/tag', body)
}

export async function setTagStatus (tag: string, enabled: boolean): Promise<number> {
  return await post<number>(`/api/channel/tag/${enabled ? 'enabled' : 'disabled'}`, { tag })
}

/** The upstream model list of a saved channel. */
export async function fetchSavedModels (id: number): Promise<string[]> {
  return await get<string[]>(`/api/channel/fetch_models/${id}`)
}

/** The upstream model list of settings not saved yet (the first key line is used). */
export async function fetchModels (body: { type: number, base_url: string, key: string, proxy_url: string }): Promise<string[]> {
  return await post<string[]>('/api/channel/fetch_models', body)
}

/** Every model a channel type offers by default or a channel lists. */
export async function knownModels (): Promise<string[]> {
  return (await get<Array<{ id: string }>>('/api/channel/models')).map((m) => m.id)
}

/** Default models by channel type (the keys are type numbers as text). */
export async function defaultModels (): Promise<Record<string, string[]>> {
  return await get<Record<string, string[]>>('/api/models')
}

/** The models that have a ratio or a per-call price; the relay refuses the others. */
export async function pricedModels (): Promise<string[]> {
  return await get<string[]>('/api/models/priced')
}

/** Channel type number (as text) -> name. */
export async function channelTypes (): Promise<Record<string, string>> {
  return await get<Record<string, string>>('/api/models/types')
}

export async function groupNames (): Promise<string[]> {
  return await get<string[]>('/api/group/')
}

/** Reads one channel's balance from its provider now and stores it; the balance in US dollars. */
export async function updateChannelBalance (id: number): Promise<number> {
  const answer = await requestEnvelope<never>('GET', `/api/channel/update_balance/${id}`)
  return typeof answer.balance === 'number' ? answer.balance : 0
}

/** Reads the balance of every enabled channel that has one; waits until all are done. */
export async function updateAllChannelBalances (): Promise<ChannelBalancesResult> {
  return await get<ChannelBalancesResult>('/api/channel/update_balance')
}
