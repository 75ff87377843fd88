import type { CHANNEL_STATUS, ChannelTagBody } from '@modelgate/contracts'
import { type ChannelUpdate, deleteDisabledChannels, rebuildAllAbilities, updateChannelsByTag } from '@modelgate/db'
import { nameList } from '@modelgate/service'
import { CM } from '../../lib/channel-messages.js'
import { fail } from '../../lib/errors.js'
import type { Deps } from '../deps.js'
import { checkPriority, normalizeModelMapping, statusChange } from './validation.js'

// Changes to many channels at once: a tag's channels, the disabled ones, every channel's abilities.

/** `DELETE /api/channel/disabled`: how many disabled and auto-disabled channels were deleted. */
export async function removeDisabledChannels ({ db, publishChange }: Deps<'db' | 'publishChange'>): Promise<number> {
  const n = await deleteDisabledChannels(db)
  if (n > 0) await publishChange({ kind: 'channel' })
  return n
}

/** `POST /api/channel/fix`: rebuilds every channel's abilities; returns the channel count. */
export async function fixAbilities ({ db, publishChange }: Deps<'db' | 'publishChange'>): Promise<number> {
  const n = await rebuildAllAbilities(db)
  await publishChange({ kind: 'channel' })
  return n
}

const blank = (v: string | readonly string[] | null | undefined): boolean =>
  v === undefined || v === null || (typeof v === 'string' ? v.trim() === '' : nameList(v).length === 0)

/** `PUT /api/channel/tag`: overwrites the given fields on every channel of the tag; returns how many. */
export async function editTag ({ db, publishChange }: Deps<'db' | 'publishChange'>, body: ChannelTagBody): Promise<number> {
  const patch: ChannelUpdate = {}
  const tag = body.tag.trim()
  if (body.new_tag !== undefined && body.new_tag !== null && body.new_tag.trim() !== tag) patch.tag = body.new_tag.trim() || null
  if (!blank(body.model_mapping)) patch.model_mapping = normalizeModelMapping(body.model_mapping!)
  if (!blank(body.groups)) patch.group = nameList(body.groups!).join(',')
  if (!blank(body.models)) patch.models = nameList(body.models!).join(',')
  if (body.priority !== undefined && body.priority !== null) patch.priority = checkPriority(body.priority)
  if (body.weight !== undefined && body.weight !== null) {
    if (body.weight < 0) throw fail(CM.weightNegative)
    patch.weight = body.weight
  }
  if (Object.keys(patch).length === 0) throw fail(CM.nothingToChange)
  const ids = await updateChannelsByTag(db, tag, patch)
  if (ids.length === 0) throw fail(CM.tagNotFound, { tag })
  await publishChange({ kind: 'channel' })
  return ids.length
}

/** `POST /api/channel/tag/enabled` and `/tag/disabled`: every channel of the tag; returns how many. */
export async function setTagStatus ({ db, publishChange }: Deps<'db' | 'publishChange'>, actor: string, tag: string, status: typeof CHANNEL_STATUS.enabled | typeof CHANNEL_STATUS.disabled): Promise<number> {
  const change = statusChange(status, actor)
  const ids = await updateChannelsByTag(db, tag.trim(), { status: change.status }, change.reason)
  if (ids.length === 0) throw fail(CM.tagNotFound, { tag })
  await publishChange({ kind: 'channel' })
  return ids.length
}
