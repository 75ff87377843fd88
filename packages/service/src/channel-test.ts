import { CHANNEL_STATUS, type ChannelStatus, type ConfigChange, type OptionValues } from '@modelgate/contracts'
import {
  type AutomaticChannelStatus,
  type Channel,
  type Database,
  type Kysely,
  recordChannelKeyError,
  recordChannelTest,
  setChannelKeyStatus,
  setChannelStatusAutomatically
} from '@modelgate/db'
import { adaptorFor, type CredentialStore, type Outbound, testChannel } from '@modelgate/providers'
import { channelConfigOf, channelKeys, keyFingerprint, parseJsonObject } from './channels.js'
import type { SecretBox } from './crypto.js'

/** What a channel test needs (the control plane and the billing worker pass their own). */
export interface ChannelTestDeps {
  db: Kysely<Database>
  box: SecretBox
  /** Current options: the auto-disable and auto-enable switches and ChannelDisableThreshold. */
  options: OptionValues
  /** Announces a status change to the gateways. */
  publish: (change: ConfigChange) => Promise<void>
  /** Where renewed OAuth credentials are shared with the gateways (redisCredentialStore); absent: kept in this process. */
  credentials?: CredentialStore
  /** The service's outbound guard the tests go through; absent: the default guard. */
  outbound?: Outbound
}

/** Why a channel could not be tested at all (nothing was sent). */
export type ChannelUntestable =
  /** The type has no adaptor yet. */
  | 'no_adaptor'
  /** Neither a requested model, a test model nor any model on the channel. */
  | 'no_model'
  /** The key cannot be opened with CRYPTO_SECRET. */
  | 'sealed_key'
  /** The key index asked for is not one of the channel's keys. */
  | 'no_key'
  /** Every key of a multi-key channel is disabled by an admin. */
  | 'keys_disabled'

/** What a test of one key of a multi-key channel found and did. */
export interface KeyTestOutcome {
  /** 0-based position of the key in the key text. */
  index: number
  fingerprint: string
  ok: boolean
  ms: number
  /** Why it failed (or was too slow); empty when it passed. */
  message: string
  /** autoDisabled when this test set the key aside, enabled when it re-enabled it. */
  changedTo?: AutomaticChannelStatus
}

export type ChannelTestOutcome =
  | { tested: false, reason: ChannelUntestable }
  | {
    tested: true
    /** Passed; for a multi-key channel tested whole, at least one key passed. */
    ok: boolean
    /** Milliseconds until the whole answer arrived (a multi-key channel: the first key that passed, else the first tested). */
    ms: number
    /** Why it failed (or was too slow), safe to show an admin; empty when it passed. */
    message: string
    /** The model asked for, before the channel's model mapping. */
    model: string
    /** autoDisabled when this test auto-disabled the channel, enabled when it re-enabled it. */
    changedTo?: AutomaticChannelStatus
    /** A multi-key channel: each key tested, in key order. */
    keys?: KeyTestOutcome[]
  }

/** How long a test may take: twice the slowness threshold (at least 10 s), else 30 s. */
function channelTestTimeoutMs (options: OptionValues): number {
  const thresholdMs = options.num('ChannelDisableThreshold') * 1000
  return thresholdMs > 0 ? Math.max(thresholdMs * 2, 10_000) : 30_000
}

/** Keys of one multi-key channel tested at once. */
const KEY_TEST_PARALLEL = 4

/** `items` through `fn`, at most `parallel` at a time, results in the order of `items`. */
async function mapLimited<T, R> (items: readonly T[], parallel: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!)
  }
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker))
  return out
}

/**
 * Tests one channel through its type's adaptor with `model` (else its test model, else its first
 * model, after its model mapping), records response_time and test_time, and applies the
 * automatic rules. A channel with one key:
 * - enabled, auto_ban on, AutomaticDisableChannelEnabled on, and failing or slower than
 *   ChannelDisableThreshold seconds (when above 0): auto-disabled (3) with the reason;
 * - auto-disabled, AutomaticEnableChannelEnabled on, passing in time: enabled again.
 * A channel with several keys tests each key that an admin has not disabled (or only key
 * `keyIndex`, which may be one an admin disabled: it is tested and left as it is):
 * - a key failing as a bad credential or exhausted account (the adaptor's 'disable' class) is
 *   auto-disabled (3) with the reason and error, under the same switches as a channel; any
 *   failure is recorded as the key's last error;
 * - an auto-disabled key that passes is enabled again when AutomaticEnableChannelEnabled is on;
 * - the channel is auto-disabled (same switches) when every key tested failed (the upstream
 *   itself may be down), or when a key failed and no key is left enabled; an auto-disabled channel
 *   comes back when an enabled key passes.
 * A change is made only from the status read (an admin's change meanwhile wins), logged, and
 * announced. A channel an admin disabled (2) is tested but never changed; keys an admin disabled
 * are never changed by a test.
 */
export async function testOneChannel (deps: ChannelTestDeps, channel: Channel, model?: string, keyIndex?: number): Promise<ChannelTestOutcome> {
  const adaptor = adaptorFor(channel.type)
  if (adaptor === undefined) return { tested: false, reason: 'no_adaptor' }
  const chosen = [model, channel.test_model, channel.models.split(',')[0]].map((m) => m?.trim() ?? '').find((m) => m !== '')
  if (chosen === undefined) return { tested: false, reason: 'no_model' }
  let keys: string[]
  try {
    keys = channelKeys(channel, deps.box)
  } catch {
    return { tested: false, reason: 'sealed_key' }
  }
  // Keyless upstreams (a local Ollama) are tested without one: index 0 is then the empty key.
  if (keyIndex !== undefined && keyIndex >= Math.max(keys.length, 1)) return { tested: false, reason: 'no_key' }
  const mapped = parseJsonObject(channel.model_mapping)[chosen]
  const upstreamModel = typeof mapped === 'string' && mapped.trim() !== '' ? mapped.trim() : chosen
  const thresholdMs = deps.options.num('ChannelDisableThreshold') * 1000
  const timeoutMs = channelTestTimeoutMs(deps.options)
  const probe = async (key: string) => {
    const result = await testChannel(adaptor, channelConfigOf(channel, key, deps), upstreamModel, timeoutMs)
    const slow = thresholdMs > 0 && result.ms > thresholdMs
    const message = result.ok && slow ? `response time ${result.ms} ms exceeds ${thresholdMs} ms` : result.message
    return { ok: result.ok && !slow, ms: result.ms, message, action: result.action }
  }
  const mayDisable = channel.auto_ban === 1 && deps.options.bool('AutomaticDisableChannelEnabled')
  const mayEnable = deps.options.bool('AutomaticEnableChannelEnabled')

  if (keys.length <= 1) {
    const result = await probe(keys[0] ?? '')
    await recordChannelTest(deps.db, channel.id, result.ms)
    const outcome: ChannelTestOutcome = { tested: true, ok: result.ok, ms: result.ms, message: result.message, model: chosen }
    const to = channel.status === CHANNEL_STATUS.enabled && !outcome.ok && mayDisable ? CHANNEL_STATUS.autoDisabled : channel.status === CHANNEL_STATUS.autoDisabled && outcome.ok && mayEnable ? CHANNEL_STATUS.enabled : undefined
    if (to !== undefined && await changeChannelStatus(deps, channel, to, to === CHANNEL_STATUS.autoDisabled ? outcome.message : 'passed a channel test')) outcome.changedTo = to
    return outcome
  }

  const fingerprints = keys.map(keyFingerprint)
  const statusOf = (i: number): ChannelStatus => channel.key_states[fingerprints[i]!]?.status ?? CHANNEL_STATUS.enabled
  const picked = keyIndex !== undefined ? [keyIndex] : keys.flatMap((_k, i) => statusOf(i) === CHANNEL_STATUS.disabled ? [] : [i])
  if (picked.length === 0) return { tested: false, reason: 'keys_disabled' }
  let keyStatesChanged = false
  const results = await mapLimited(picked, KEY_TEST_PARALLEL, async (i): Promise<KeyTestOutcome> => {
    const fingerprint = fingerprints[i]!
    const result = await probe(keys[i]!)
    const out: KeyTestOutcome = { index: i, fingerprint, ok: result.ok, ms: result.ms, message: result.message }
    const status = statusOf(i)
    // An admin's disable stands: such a key is only tested.
    if (status === CHANNEL_STATUS.disabled) return out
    if (!result.ok && status === CHANNEL_STATUS.enabled && result.action === 'disable' && mayDisable) {
      if (await setChannelKeyStatus(deps.db, { id: channel.id, fingerprint, from: [CHANNEL_STATUS.enabled], to: CHANNEL_STATUS.autoDisabled, reason: result.message, lastError: result.message })) {
        out.changedTo = CHANNEL_STATUS.autoDisabled
        keyStatesChanged = true
      }
    } else if (!result.ok) {
      await recordChannelKeyError(deps.db, channel.id, fingerprint, result.message)
    } else if (status === CHANNEL_STATUS.autoDisabled && mayEnable) {
      if (await setChannelKeyStatus(deps.db, { id: channel.id, fingerprint, from: [CHANNEL_STATUS.autoDisabled], to: CHANNEL_STATUS.enabled, reason: 'passed a channel test' })) {
        out.changedTo = CHANNEL_STATUS.enabled
        keyStatesChanged = true
      }
    }
    return out
  })
  const passed = results.find((r) => r.ok)
  const failed = results.find((r) => !r.ok)
  const ms = (passed ?? results[0]!).ms
  await recordChannelTest(deps.db, channel.id, ms)
  const outcome: ChannelTestOutcome = { tested: true, ok: passed !== undefined, ms, message: failed?.message ?? '', model: chosen, keys: results }

  const statusAfter = (i: number): ChannelStatus => results.find((r) => r.index === i)?.changedTo ?? statusOf(i)
  const enabledLeft = keys.some((_k, i) => statusAfter(i) === CHANNEL_STATUS.enabled)
  // A key an admin disabled passing says nothing about the keys the channel may use.
  const usablePassed = results.some((r) => r.ok && statusAfter(r.index) === CHANNEL_STATUS.enabled)
  const wholeFailed = keyIndex === undefined && passed === undefined
  let to: AutomaticChannelStatus | undefined
  let reason = ''
  if (channel.status === CHANNEL_STATUS.enabled && mayDisable && failed !== undefined && (wholeFailed || !enabledLeft)) {
    to = CHANNEL_STATUS.autoDisabled
    reason = wholeFailed ? `every key failed the test: ${failed.message}` : `no enabled key left: ${failed.message}`
  } else if (channel.status === CHANNEL_STATUS.autoDisabled && mayEnable && usablePassed) {
    to = CHANNEL_STATUS.enabled
    reason = 'a key passed a channel test'
  }
  if (to !== undefined && await changeChannelStatus(deps, channel, to, reason)) outcome.changedTo = to
  else if (keyStatesChanged) await deps.publish({ kind: 'channel', id: channel.id })
  return outcome
}

/** Moves the channel between enabled and autoDisabled from the status read, and announces it; false when an admin changed it meanwhile. */
async function changeChannelStatus (deps: ChannelTestDeps, channel: Channel, to: AutomaticChannelStatus, reason: string): Promise<boolean> {
  if (!await setChannelStatusAutomatically(deps.db, { id: channel.id, from: channel.status, to, reason })) return false
  await deps.publish({ kind: 'channel', id: channel.id })
  return true
}

/** Counts of a run over many channels. */
export interface ChannelTestsResult {
  /** Channels a request was sent for. */
  tested: number
  disabled: number
  enabled: number
}

/**
 * Tests `channels` with {@link testOneChannel}, `parallel` at a time (default 4); untestable ones
 * are skipped. `stopped` is checked before each channel, to end a run early (shutdown).
 */
export async function testChannels (
  deps: ChannelTestDeps,
  channels: readonly Channel[],
  opts: { parallel?: number, stopped?: () => boolean } = {}
): Promise<ChannelTestsResult> {
  const result: ChannelTestsResult = { tested: 0, disabled: 0, enabled: 0 }
  const queue = [...channels]
  const worker = async () => {
    for (let channel = queue.shift(); channel !== undefined && opts.stopped?.() !== true; channel = queue.shift()) {
      const outcome = await testOneChannel(deps, channel)
      if (!outcome.tested) continue
      result.tested++
      if (outcome.changedTo === CHANNEL_STATUS.autoDisabled) result.disabled++
      if (outcome.changedTo === CHANNEL_STATUS.enabled) result.enabled++
    }
  }
  await Promise.all(Array.from({ length: opts.parallel ?? 4 }, worker))
  return result
}
