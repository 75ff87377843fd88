import { type ChannelKeyStatusBody, type ChannelKeyView, CHANNEL_STATUS } from '@modelgate/contracts'
import { type Channel, findChannelById, setChannelKeyStatus } from '@modelgate/db'
import { channelKeys, keyFingerprint } from '@modelgate/service'
import { CM } from '../lib/channel-messages.js'
import { fail } from '../lib/errors.js'
import type { Deps } from './deps.js'

/** Keys this short show only their last 2 characters: 3 + 4 would give most of the key away. */
const SHORT_KEY = 12

/** A key as an admin may see it: its first 3 and last 4 characters. */
export function keyHint (key: string): string {
  return key.length < SHORT_KEY ? `…${key.slice(-2)}` : `${key.slice(0, 3)}…${key.slice(-4)}`
}

async function channelWithKeys ({ db, secrets }: Deps<'db' | 'secrets'>, id: number): Promise<{ row: Channel, keys: string[] }> {
  const row = await findChannelById(db, id)
  if (row === undefined) throw fail(CM.channelNotFound)
  try {
    return { row, keys: channelKeys(row, secrets) }
  } catch {
    throw fail(CM.sealedKey)
  }
}

function keyViews (row: Pick<Channel, 'key_states'>, keys: readonly string[]): ChannelKeyView[] {
  return keys.map((key, index) => {
    const fingerprint = keyFingerprint(key)
    const state = row.key_states[fingerprint]
    return {
      index,
      fingerprint,
      hint: keyHint(key),
      status: state?.status ?? CHANNEL_STATUS.enabled,
      reason: state?.reason ?? '',
      time: state?.time ?? 0,
      last_error: state?.last_error ?? '',
      last_error_time: state?.last_error_time ?? 0
    }
  })
}

/**
 * `POST /api/channel/{id}/key` (root, after a fresh verification; the route checks both): the
 * stored key as it was entered, one credential per line, and the channel's name for the audit entry.
 */
export async function revealChannelKey ({ db, secrets }: Deps<'db' | 'secrets'>, id: number): Promise<{ key: string, name: string }> {
  const row = await findChannelById(db, id)
  if (row === undefined) throw fail(CM.channelNotFound)
  try {
    return { key: secrets.open(row.key), name: row.name }
  } catch {
    throw fail(CM.sealedKey)
  }
}

/** `GET /api/channel/{id}/keys`: every key of the channel, masked, with its state, in key-line order. */
export async function listChannelKeys (deps: Deps<'db' | 'secrets'>, id: number): Promise<ChannelKeyView[]> {
  const { row, keys } = await channelWithKeys(deps, id)
  return keyViews(row, keys)
}

/**
 * `PUT /api/channel/{id}/keys`: an admin enables (1) or disables (2) one key of a multi-key
 * channel, whatever its state was; the channel's own status stays (the admin changes it apart).
 * Returns the index of the key changed and the channel's keys after the change.
 */
export async function setChannelKeyStatusByAdmin (deps: Deps<'db' | 'secrets' | 'publishChange'>, actor: string, id: number, body: ChannelKeyStatusBody): Promise<{ index: number, keys: ChannelKeyView[] }> {
  if (body.status !== CHANNEL_STATUS.enabled && body.status !== CHANNEL_STATUS.disabled) throw fail(CM.keyStatusOneOrTwo)
  const { keys } = await channelWithKeys(deps, id)
  if (keys.length < 2) throw fail(CM.singleKeyChannel)
  const fingerprints = keys.map(keyFingerprint)
  const index = body.fingerprint !== undefined ? fingerprints.indexOf(body.fingerprint) : body.index ?? -1
  const fingerprint = fingerprints[index]
  if (fingerprint === undefined) throw fail(CM.keyNotFound)
  const reason = `${body.status === CHANNEL_STATUS.enabled ? 'enabled' : 'disabled'} by admin ${actor}`
  await setChannelKeyStatus(deps.db, { id, fingerprint, from: [CHANNEL_STATUS.enabled, CHANNEL_STATUS.disabled, CHANNEL_STATUS.autoDisabled], to: body.status, reason })
  await deps.publishChange({ kind: 'channel', id })
  const after = await channelWithKeys(deps, id)
  return { index, keys: keyViews(after.row, after.keys) }
}
