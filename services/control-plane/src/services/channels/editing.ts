import type { ChannelCreateBody, ChannelUpdateBody, ChannelView } from '@modelgate/contracts'
import { type Channel, type ChannelUpdate, deleteChannel, insertChannels, type NewChannel, pruneChannelKeyStates, updateChannel } from '@modelgate/db'
import { keyFingerprint } from '@modelgate/service'
import { CM } from '../../lib/channel-messages.js'
import { fail } from '../../lib/errors.js'
import { keyHint } from '../channel-keys.js'
import type { Deps } from '../deps.js'
import { channelOrFail } from './listing.js'
import {
  applyFields,
  type ChannelDraft,
  checkPriority,
  checkTargets,
  columnsOf,
  draftOf,
  keyLines,
  NEW_DRAFT,
  normalizeBaseUrl,
  statusChange
} from './validation.js'
import { channelView, keyInfo, viewOf } from './views.js'

/** Channels one batch may create. */
const BATCH_MAX = 1000

/** `POST /api/channel/`: one channel, one multi-key channel, or (batch) one channel per key line. */
export async function createChannels (deps: Deps<'db' | 'secrets' | 'outbound' | 'publishChange'>, body: ChannelCreateBody): Promise<ChannelView[]> {
  const draft = applyFields(NEW_DRAFT, body)
  await checkTargets(deps, draft)
  const keys = keyLines(body.key ?? '')
  if (keys.length === 0) throw fail(CM.keyRequired)
  const batch = body.mode === 'batch' || body.batch === true
  if (batch && keys.length > BATCH_MAX) throw fail(CM.tooManyKeys, { max: BATCH_MAX })
  const columns = columnsOf(draft)
  const rows: NewChannel[] = (batch ? keys.map((k) => [k]) : [keys]).map((ks) => ({ ...columns, key: deps.secrets.seal(ks.join('\n')), other_info: {} }))
  const created = await insertChannels(deps.db, rows)
  await deps.publishChange(created.length === 1 ? { kind: 'channel', id: created[0]!.id } : { kind: 'channel' })
  return created.map((c, i) => channelView(c, { count: batch ? 1 : keys.length, hint: keyHint(batch ? keys[i]! : keys[0]!) }))
}

/**
 * `POST /api/channel/copy/{id}`: a new channel with the original's settings and keys (copied
 * sealed, never shown), enabled, with fresh counters, test results and key states.
 */
export async function copyChannel (deps: Deps<'db' | 'secrets' | 'publishChange'>, id: number, suffix = ' copy'): Promise<ChannelView> {
  const row = await channelOrFail(deps, id)
  const key = keyInfo(deps, row)
  if (key.count === 0) throw fail(CM.sealedKey)
  const copy: NewChannel = { ...columnsOf(draftOf(row)), name: `${row.name}${suffix}`, key: row.key, other_info: {} }
  const [created] = await insertChannels(deps.db, [copy])
  await deps.publishChange({ kind: 'channel', id: created!.id })
  return channelView(created!, key)
}

const INLINE_FIELDS = new Set(['id', 'status', 'priority', 'weight'])

/** Whether an edit changes where the channel's key goes: its type, base URL or proxy. */
function sendsKeyElsewhere (row: Channel, draft: ChannelDraft): boolean {
  let stored = row.base_url
  try {
    stored = normalizeBaseUrl(row.base_url)
  } catch {
    // A stored address the form would refuse: compared as it is.
  }
  return draft.type !== row.type || draft.base_url !== stored || draft.proxy_url.trim() !== row.proxy_url.trim()
}

/**
 * `PUT /api/channel/`. A body of only id with status, priority and/or weight is the list's inline
 * edit; anything else is the edit form, where absent fields stay and a blank key keeps the
 * stored one. Abilities follow in the same transaction.
 */
export async function updateChannelFields (deps: Deps<'db' | 'secrets' | 'outbound' | 'publishChange'>, actor: string, body: ChannelUpdateBody): Promise<ChannelView> {
  const sent = Object.keys(body).filter((k) => (body as Record<string, unknown>)[k] !== undefined)
  const patch: ChannelUpdate = {}
  let reason: string | undefined
  let newKeys: string[] | undefined
  if (sent.every((k) => INLINE_FIELDS.has(k))) {
    if (sent.length === 1) throw fail(CM.nothingToChange)
    if (body.status !== undefined) ({ status: patch.status, reason } = statusChange(body.status, actor))
    if (body.priority !== undefined) patch.priority = checkPriority(body.priority)
    if (body.weight !== undefined) patch.weight = Math.max(0, body.weight)
  } else {
    const row = await channelOrFail(deps, body.id)
    const draft = applyFields(draftOf(row), body)
    await checkTargets(deps, draft)
    const columns: Record<string, unknown> = columnsOf(draft)
    // Only the columns the form sent are written (other follows the type's default), so a
    // concurrent change of another field survives.
    const written = new Set(sent.map((k) => k === 'groups' ? 'group' : k))
    if (written.has('type')) written.add('other')
    for (const [column, value] of Object.entries(columns)) if (written.has(column)) (patch as Record<string, unknown>)[column] = value
    const key = keyLines(body.key ?? '')
    // Keys are write-only, but the type, base URL and proxy decide where the key is sent: an
    // admin pointing a channel at a server of their own must bring the key, not reuse it.
    if (key.length === 0 && sendsKeyElsewhere(row, draft)) throw fail(CM.keyForNewTarget)
    if (key.length > 0) {
      patch.key = deps.secrets.seal(key.join('\n'))
      newKeys = key
    }
    if (body.status !== undefined && body.status !== row.status) ({ status: patch.status, reason } = statusChange(body.status, actor))
    if (Object.keys(patch).length === 0) return channelView(row, keyInfo(deps, row))
  }
  const updated = await updateChannel(deps.db, body.id, patch, reason)
  if (updated === undefined) throw fail(CM.channelNotFound)
  if (newKeys !== undefined) {
    // The states of keys no longer in the list go with them.
    updated.key_states = await pruneChannelKeyStates(deps.db, body.id, newKeys.map(keyFingerprint)) ?? updated.key_states
  }
  await deps.publishChange({ kind: 'channel', id: body.id })
  return newKeys !== undefined ? channelView(updated, { count: newKeys.length, hint: keyHint(newKeys[0]!) }) : await viewOf(deps, updated)
}

/** `DELETE /api/channel/{id}/`. */
export async function removeChannel ({ db, publishChange }: Deps<'db' | 'publishChange'>, id: number): Promise<void> {
  if (!await deleteChannel(db, id)) throw fail(CM.channelNotFound)
  await publishChange({ kind: 'channel', id })
}
