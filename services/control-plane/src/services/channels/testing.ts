import { CHANNEL_STATUS } from '@modelgate/contracts'
import { findChannelById, findChannelsByStatus } from '@modelgate/db'
import { acquireLock, type ChannelTestDeps, releaseLock, renewLock, testChannels, testOneChannel } from '@modelgate/service'
import { CM } from '../../lib/channel-messages.js'
import type { Msg } from '../../lib/i18n.js'
import type { Deps } from '../deps.js'
import { type CredentialDeps, credentialStore } from './credentials.js'

/** What channel tests use. */
export type ChannelTestingDeps = CredentialDeps & Deps<'outbound' | 'loadOptions'>

/** A message and its placeholders. */
export interface MsgPart { msg: Msg, vars: Record<string, string | number> }

/** A single test's answer: its message in parts (joined by a space), `time` in seconds. */
export interface TestAnswer { success: boolean, parts: MsgPart[], time: number }

const UNTESTABLE: Record<'no_adaptor' | 'no_model' | 'sealed_key', Msg> = {
  no_adaptor: CM.noAdaptor,
  no_model: CM.noTestModel,
  sealed_key: CM.sealedKey
}

async function testDeps (deps: ChannelTestingDeps): Promise<ChannelTestDeps> {
  return { db: deps.db, box: deps.secrets, options: await deps.loadOptions(), publish: deps.publishChange, credentials: credentialStore(deps), outbound: deps.outbound }
}

/**
 * `GET /api/channel/test/{id}`: tests the channel now (every usable key of a multi-key channel, or
 * only key `keyIndex`), applying the automatic status rules. Keys are counted from 1 in messages.
 */
export async function testChannelNow (deps: ChannelTestingDeps, id: number, model?: string, keyIndex?: number): Promise<TestAnswer> {
  const row = await findChannelById(deps.db, id)
  if (row === undefined) return { success: false, parts: [{ msg: CM.channelNotFound, vars: {} }], time: 0 }
  const outcome = await testOneChannel(await testDeps(deps), row, model, keyIndex)
  if (!outcome.tested) {
    const part: MsgPart = outcome.reason === 'no_key'
      ? { msg: CM.noKeyToTest, vars: { n: (keyIndex ?? 0) + 1 } }
      : outcome.reason === 'keys_disabled' ? { msg: CM.keysAllDisabled, vars: { name: row.name } } : { msg: UNTESTABLE[outcome.reason], vars: { type: row.type } }
    return { success: false, parts: [part], time: 0 }
  }
  const time = outcome.ms / 1000
  const vars = { name: row.name, model: outcome.model, seconds: (outcome.ms / 1000).toFixed(2), reason: outcome.message }
  if (outcome.keys === undefined) {
    const msg = outcome.ok
      ? outcome.changedTo === CHANNEL_STATUS.enabled ? CM.testPassedEnabled : CM.testPassed
      : outcome.changedTo === CHANNEL_STATUS.autoDisabled ? CM.testFailedDisabled : CM.testFailed
    return { success: outcome.ok, parts: [{ msg, vars }], time }
  }
  const parts: MsgPart[] = []
  if (keyIndex !== undefined) {
    const key = outcome.keys[0]!
    const n = key.index + 1
    parts.push(key.ok
      ? { msg: CM.keyPassed, vars: { ...vars, n, seconds: (key.ms / 1000).toFixed(2) } }
      : { msg: CM.keyFailed, vars: { ...vars, n, reason: key.message } })
  } else {
    parts.push({ msg: CM.keysTested, vars: { ...vars, passed: outcome.keys.filter((k) => k.ok).length, total: outcome.keys.length } })
    for (const key of outcome.keys) if (!key.ok) parts.push({ msg: CM.keyFailedNote, vars: { n: key.index + 1, reason: key.message } })
  }
  for (const key of outcome.keys) {
    if (key.changedTo === CHANNEL_STATUS.autoDisabled) parts.push({ msg: CM.keyAutoDisabledNote, vars: { n: key.index + 1 } })
    if (key.changedTo === CHANNEL_STATUS.enabled) parts.push({ msg: CM.keyReEnabledNote, vars: { n: key.index + 1 } })
  }
  if (outcome.changedTo === CHANNEL_STATUS.autoDisabled) parts.push({ msg: CM.channelAutoDisabledNote, vars: {} })
  if (outcome.changedTo === CHANNEL_STATUS.enabled) parts.push({ msg: CM.channelReEnabledNote, vars: {} })
  const success = keyIndex !== undefined ? outcome.keys[0]!.ok : outcome.ok
  return { success, parts, time: keyIndex !== undefined ? outcome.keys[0]!.ms / 1000 : time }
}

/** Redis key (under the service's prefix) held while a test of all channels runs on any replica. */
export const TEST_ALL_LOCK_KEY = 'channel-test:all'
const TEST_ALL_LOCK_MS = 60_000

/**
 * Tests of all channels in the background, one run at a time across replicas (a Redis lock,
 * renewed while the run lasts). `close` stops taking channels and waits for the run in hand.
 */
export class ChannelTestAll {
  readonly #deps: ChannelTestingDeps
  #running: Promise<void> | undefined
  #closing = false

  constructor (deps: ChannelTestingDeps) {
    this.#deps = deps
  }

  /** Starts a run unless one is going (here or on another replica); false when one is. */
  async start (): Promise<boolean> {
    const deps = this.#deps
    const { redis, log } = deps
    if (this.#closing) return false
    const token = await acquireLock(redis, TEST_ALL_LOCK_KEY, TEST_ALL_LOCK_MS)
    if (token === undefined) return false
    const renew = setInterval(() => {
      renewLock(redis, TEST_ALL_LOCK_KEY, token, TEST_ALL_LOCK_MS)
        .catch((err: unknown) => log.warn({ err }, 'channel test lock not renewed'))
    }, TEST_ALL_LOCK_MS / 3)
    this.#running = (async () => {
      try {
        // Enabled channels may need disabling and auto-disabled ones re-enabling; an admin's disable stands.
        const channels = await findChannelsByStatus(deps.db, [CHANNEL_STATUS.enabled, CHANNEL_STATUS.autoDisabled])
        const result = await testChannels(await testDeps(deps), channels, { stopped: () => this.#closing })
        log.info({ result }, 'tested all channels')
      } catch (err) {
        log.error({ err }, 'testing all channels failed')
      } finally {
        clearInterval(renew)
        await releaseLock(redis, TEST_ALL_LOCK_KEY, token).catch((err: unknown) => log.warn({ err }, 'channel test lock not released'))
      }
    })()
    return true
  }

  async close (): Promise<void> {
    this.#closing = true
    await this.#running
  }
}
