import { CHANNEL_STATUS, type ChannelTagRow, type ChannelView } from '@modelgate/contracts'
import { type Channel, findChannelKeysByIds, type PublicChannel } from '@modelgate/db'
import { channelKeys, nameList } from '@modelgate/service'
import { keyHint } from '../channel-keys.js'
import type { Deps } from '../deps.js'

function otherInfo (info: Record<string, unknown>): ChannelView['other_info'] {
  const out: ChannelView['other_info'] = {}
  if (typeof info.status_reason === 'string') out.status_reason = info.status_reason
  if (typeof info.status_time === 'number') out.status_time = info.status_time
  return out
}

/** What a view may say of a channel's key: how many credentials it holds and the first one's hint. */
export interface KeyInfo { count: number, hint: string }
export const NO_KEY: KeyInfo = { count: 0, hint: '' }

/** The key info of a sealed key; none when CRYPTO_SECRET cannot open it. */
export function keyInfo ({ secrets }: Deps<'secrets'>, row: Pick<Channel, 'key'>): KeyInfo {
  try {
    const keys = channelKeys(row, secrets)
    return { count: keys.length, hint: keys[0] === undefined ? '' : keyHint(keys[0]) }
  } catch {
    return NO_KEY
  }
}

/** Key infos of the channels `ids` (their keys are sealed, so they are opened here). */
export async function keyInfos (deps: Deps<'db' | 'secrets'>, ids: readonly number[]): Promise<Map<number, KeyInfo>> {
  const rows = await findChannelKeysByIds(deps.db, ids)
  return new Map(rows.map((r) => [r.id, keyInfo(deps, r)]))
}

/** A channel as lists and the detail show it: never the key, only how many it holds and a hint. */
export function channelView (row: PublicChannel, key: KeyInfo): ChannelView {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    openai_organization: row.openai_organization,
    max_input_tokens: row.max_input_tokens,
    base_url: row.base_url,
    other: row.other,
    models: row.models,
    group: row.group,
    model_mapping: row.model_mapping,
    status_code_mapping: row.status_code_mapping,
    auto_ban: row.auto_ban,
    test_model: row.test_model,
    priority: row.priority,
    weight: row.weight,
    tag: row.tag,
    proxy_url: row.proxy_url,
    setting: row.setting,
    status: row.status,
    response_time: row.response_time,
    test_time: row.test_time,
    balance: row.balance,
    balance_updated_time: row.balance_updated_time,
    used_quota: row.used_quota,
    created_time: row.created_time,
    other_info: otherInfo(row.other_info),
    param_override: row.param_override,
    header_override: row.header_override,
    multi_key_mode: row.multi_key_mode,
    key_states: row.key_states,
    key_count: key.count,
    key_hint: key.hint
  }
}

/** One channel's view with its key info read from the database. */
export async function viewOf (deps: Deps<'db' | 'secrets'>, row: PublicChannel): Promise<ChannelView> {
  return channelView(row, (await keyInfos(deps, [row.id])).get(row.id) ?? NO_KEY)
}

const common = <T>(values: T[]): T | undefined => values.every((v) => v === values[0]) ? values[0] : undefined
const union = (lists: string[]): string => [...new Set(lists.flatMap((l) => nameList(l)))].sort().join(',')

/** A tag's row in the tag-mode list: its channels, and what they share (0 or null when they differ). */
export function tagRow (tag: string, children: PublicChannel[], infos: ReadonlyMap<number, KeyInfo>): ChannelTagRow {
  const views = children.map((c) => channelView(c, infos.get(c.id) ?? NO_KEY))
  return {
    tag,
    children: views,
    status: common(views.map((c) => c.status)) ?? 0,
    enabled_count: views.filter((c) => c.status === CHANNEL_STATUS.enabled).length,
    type: common(views.map((c) => c.type)) ?? null,
    priority: common(views.map((c) => c.priority)) ?? null,
    weight: common(views.map((c) => c.weight)) ?? null,
    group: union(views.map((c) => c.group)),
    models: union(views.map((c) => c.models)),
    used_quota: views.reduce((s, c) => s + c.used_quota, 0),
    balance: views.reduce((s, c) => s + c.balance, 0)
  }
}
