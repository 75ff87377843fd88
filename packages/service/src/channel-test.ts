import type { ConfigChange, OptionValues } from '@modelgate/contracts'
import { type Channel, type Database, type Kysely, recordChannelTest, setChannelStatusAutomatically } from '@modelgate/db'
import { adaptorFor, testChannel } from '@modelgate/providers'
import { channelKeys, channelOverrides, parseJsonObject } from './channels.js'
import type { SecretBox } from './crypto.js'

/** What a channel test needs (the control plane and the billing worker pass their own). */
export interface ChannelTestDeps {
  db: Kysely<Database>
  box: SecretBox
  /** Current options: the auto-disable and auto-enable switches and ChannelDisableThreshold. */
  options: OptionValues
  /** Announces a status change to the gateways. */
  publish: (change: ConfigChange) => Promise<void>
}

/** Why a channel could not be tested at all (nothing was sent). */
export type ChannelUntestable =
  /** The type has no adaptor yet. */
  | 'no_adaptor'
  /** Neither a requested model, a test model nor any model on the channel. */
  | 'no_model'
  /** The key cannot be opened with CRYPTO_SECRET. */
  | 'sealed_key'

export type ChannelTestOutcome =
  | { tested: false, reason: ChannelUntestable }
  | {
    tested: true
    ok: boolean
    /** Milliseconds until the whole answer arrived. */
    ms: number
    /** Why it failed (or was too slow), safe to show an admin; empty when it passed. */
    message: string
    /** The model asked for, before the channel's model mapping. */
    model: string
    /** 3 when this test auto-disabled the channel, 1 when it re-enabled it. */
    changedTo?: 1 | 3
  }

/** How long a test may take: twice the slowness threshold (at least 10 s), else 30 s. */
function channelTestTimeoutMs (options: OptionValues): number {
  const thresholdMs = options.num('ChannelDisableThreshold') * 1000
  return thresholdMs > 0 ? Math.max(thresholdMs * 2, 10_000) : 30_000
}

/**
 * Tests one channel through its type's adaptor with `model` (else its test model, else its first
 * model, after its model mapping, with its first key), records response_time and test_time, and
 * applies the automatic rules:
 * - enabled, auto_ban on, AutomaticDisableChannelEnabled on, and failing or slower than
 *   ChannelDisableThreshold seconds (when above 0): auto-disabled (3) with the reason;
 * - auto-disabled, AutomaticEnableChannelEnabled on, passing in time: enabled again.
 * A change is made only from the status read (an admin's change meanwhile wins), logged, and
 * announced. A channel an admin disabled (2) is tested but never changed.
 */
export async function testOneChannel (deps: ChannelTestDeps, channel: Channel, model?: string): Promise<ChannelTestOutcome> {
  const adaptor = adaptorFor(channel.type)
  if (adaptor === undefined) return { tested: false, reason: 'no_adaptor' }
  const chosen = [model, channel.test_model, channel.models.split(',')[0]].map((m) => m?.trim() ?? '').find((m) => m !== '')
  if (chosen === undefined) return { tested: false, reason: 'no_model' }
  let key: string
  try {
    // Keyless upstreams (a local Ollama) are tested without one.
    key = channelKeys(channel, deps.box)[0] ?? ''
  } catch {
    return { tested: false, reason: 'sealed_key' }
  }
  const mapped = parseJsonObject(channel.model_mapping)[chosen]
  const upstreamModel = typeof mapped === 'string' && mapped.trim() !== '' ? mapped.trim() : chosen
  const result = await testChannel(adaptor, {
    id: channel.id,
    type: channel.type,
    key,
    baseUrl: channel.base_url.replace(/\/+$/, ''),
    other: channel.other,
    organization: channel.openai_organization,
    setting: parseJsonObject(channel.setting),
    proxyUrl: channel.proxy_url.trim(),
    ...channelOverrides(channel)
  }, upstreamModel, channelTestTimeoutMs(deps.options))
  await recordChannelTest(deps.db, channel.id, result.ms)

  const thresholdMs = deps.options.num('ChannelDisableThreshold') * 1000
  const slow = thresholdMs > 0 && result.ms > thresholdMs
  const message = result.ok && slow ? `response time ${result.ms} ms exceeds ${thresholdMs} ms` : result.message
  const outcome: ChannelTestOutcome = { tested: true, ok: result.ok && !slow, ms: result.ms, message, model: chosen }
  let to: 1 | 3 | undefined
  if (channel.status === 1 && !outcome.ok && channel.auto_ban === 1 && deps.options.bool('AutomaticDisableChannelEnabled')) to = 3
  else if (channel.status === 3 && outcome.ok && deps.options.bool('AutomaticEnableChannelEnabled')) to = 1
  if (to !== undefined) {
    const reason = to === 3 ? message : 'passed a channel test'
    if (await setChannelStatusAutomatically(deps.db, { id: channel.id, from: channel.status, to, reason })) {
      outcome.changedTo = to
      await deps.publish({ kind: 'channel', id: channel.id })
    }
  }
  return outcome
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
      if (outcome.changedTo === 3) result.disabled++
      if (outcome.changedTo === 1) result.enabled++
    }
  }
  await Promise.all(Array.from({ length: opts.parallel ?? 4 }, worker))
  return result
}
