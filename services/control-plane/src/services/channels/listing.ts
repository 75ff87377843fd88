import type { ChannelDetail, ChannelListItem, ChannelPage, ChannelSearchQuery } from '@modelgate/contracts'
import { type Channel, type ChannelFilter, findAllChannelModels, findChannelById, findChannelKeysAfter, listChannels, listChannelsByTag } from '@modelgate/db'
import { defaultModelsByType } from '@modelgate/providers'
import { channelKeys } from '@modelgate/service'
import { CM } from '../../lib/channel-messages.js'
import { fail } from '../../lib/errors.js'
import { pageOf } from '../../lib/paging.js'
import type { Deps } from '../deps.js'
import { channelView, keyInfo, keyInfos, NO_KEY, tagRow } from './views.js'

/** Keys are matched by substring only for keywords this long: shorter ones would match nearly every key. */
const KEY_SEARCH_MIN = 4
const KEY_SEARCH_BATCH = 500

/**
 * Ids of channels holding `keyword` as one of their keys (keys are sealed, so they are opened
 * here). Whole keys only: a substring match would let an admin read a key out one character at
 * a time through the search, and keys are write-only.
 */
async function channelIdsByKey ({ db, secrets }: Deps<'db' | 'secrets'>, keyword: string): Promise<number[]> {
  const ids: number[] = []
  for (let after = 0; ;) {
    const batch = await findChannelKeysAfter(db, after, KEY_SEARCH_BATCH)
    for (const row of batch) {
      let keys: string[]
      try {
        keys = channelKeys(row, secrets)
      } catch {
        continue
      }
      if (keys.includes(keyword)) ids.push(row.id)
    }
    if (batch.length < KEY_SEARCH_BATCH) return ids
    after = batch[batch.length - 1]!.id
  }
}

/** `GET /api/channel/` and `/search`. */
export async function listChannelPage (deps: Deps<'db' | 'secrets'>, q: ChannelSearchQuery): Promise<ChannelPage> {
  const { page, pageSize, offset } = pageOf(q)
  const filter: ChannelFilter = {}
  const keyword = q.keyword?.trim() ?? ''
  if (keyword !== '') {
    const ids = keyword.length >= KEY_SEARCH_MIN ? await channelIdsByKey(deps, keyword) : []
    if (/^\d+$/.test(keyword) && Number.isSafeInteger(Number(keyword))) ids.push(Number(keyword))
    filter.keyword = { text: keyword, ids }
  }
  if (q.group !== undefined && q.group.trim() !== '') filter.group = q.group.trim()
  if (q.model !== undefined && q.model.trim() !== '') filter.model = q.model.trim()
  const query = { filter, idSort: q.id_sort === true, offset, limit: pageSize }
  if (q.tag_mode === true) {
    const { items, total } = await listChannelsByTag(deps.db, query)
    const infos = await keyInfos(deps, items.flatMap((r) => r.tag === null ? [r.channel.id] : r.children.map((c) => c.id)))
    const rows = items.map((r): ChannelListItem => r.tag === null ? channelView(r.channel, infos.get(r.channel.id) ?? NO_KEY) : tagRow(r.tag, r.children, infos))
    return { items: rows, page, page_size: pageSize, total }
  }
  const { items, total } = await listChannels(deps.db, query)
  const infos = await keyInfos(deps, items.map((c) => c.id))
  return { items: items.map((c) => channelView(c, infos.get(c.id) ?? NO_KEY)), page, page_size: pageSize, total }
}

/** The channel `id`; refused when there is none. */
export async function channelOrFail ({ db }: Deps<'db'>, id: number): Promise<Channel> {
  const row = await findChannelById(db, id)
  if (row === undefined) throw fail(CM.channelNotFound)
  return row
}

/** `GET /api/channel/{id}`: the channel with its key's hint, never the key (admins only). */
export async function getChannelDetail (deps: Deps<'db' | 'secrets'>, id: number): Promise<ChannelDetail> {
  const row = await channelOrFail(deps, id)
  return channelView(row, keyInfo(deps, row))
}

/** `GET /api/channel/models`: every model a channel type offers by default or a channel lists. */
export async function knownModels ({ db }: Deps<'db'>): Promise<Array<{ id: string }>> {
  const names = new Set(await findAllChannelModels(db))
  for (const models of Object.values(defaultModelsByType())) for (const m of models) names.add(m)
  return [...names].sort().map((id) => ({ id }))
}
