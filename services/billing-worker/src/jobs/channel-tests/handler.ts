import { type ConfigChange, configChannel, type OptionValues } from '@modelgate/contracts'
import { type Channel, type Database, type Kysely, setChannelStatusAutomatically } from '@modelgate/db'
import { adaptorFor, type ChannelTestResult, testChannel } from '@modelgate/providers'
import { channelKeys, parseJsonObject, type SecretBox } from '@modelgate/service'
import type { Redis } from 'ioredis'

export interface ChannelTestDeps {
  db: Kysely<Database>
  redis: Redis
  keyPrefix: string
  box: SecretBox
  options: () => Promise<OptionValues>
  /** Replaceable in tests. */
  test?: typeof testChannel
}

export interface ChannelTestsResult { tested: number, disabled: number, enabled: number }

async function setStatus (deps: ChannelTestDeps, channel: Channel, status: 1 | 3, reason: string): Promise<boolean> {
  // Only from the state we tested: an admin's change in the meantime wins.
  const changed = await setChannelStatusAutomatically(deps.db, { id: channel.id, from: channel.status, to: status, reason })
  if (changed) {
    const change: ConfigChange = { kind: 'channel', id: channel.id }
    await deps.redis.publish(configChannel(deps.keyPrefix), JSON.stringify(change))
  }
  return changed
}

export async function run (deps: ChannelTestDeps): Promise<ChannelTestsResult> {
  const options = await deps.options()
  const autoDisable = options.bool('AutomaticDisableChannelEnabled')
  const autoEnable = options.bool('AutomaticEnableChannelEnabled')
  const result: ChannelTestsResult = { tested: 0, disabled: 0, enabled: 0 }
  if (!autoDisable && !autoEnable) return result
  const thresholdMs = options.num('ChannelDisableThreshold') * 1000
  const channels = await deps.db.selectFrom('channels').selectAll().where('status', 'in', [1, 3]).orderBy('id').execute()
  const test = deps.test ?? testChannel
  const queue = [...channels]
  const worker = async () => {
    for (let channel = queue.shift(); channel !== undefined; channel = queue.shift()) {
      const adaptor = adaptorFor(channel.type)
      const model = channel.test_model !== '' ? channel.test_model : channel.models.split(',')[0]?.trim() ?? ''
      if (adaptor === undefined || model === '') continue
      let key: string
      try {
        key = channelKeys(channel, deps.box)[0] ?? ''
      } catch {
        continue
      }
      const outcome: ChannelTestResult = await test(adaptor, {
        id: channel.id, type: channel.type, key, baseUrl: channel.base_url.replace(/\/+$/, ''), other: channel.other,
        organization: channel.openai_organization, setting: parseJsonObject(channel.setting)
      }, model, Math.max(thresholdMs * 2, 10_000))
      result.tested++
      await deps.db.updateTable('channels').set({ response_time: outcome.ms, test_time: Math.floor(Date.now() / 1000) }).where('id', '=', channel.id).execute()
      const slow = thresholdMs > 0 && outcome.ms > thresholdMs
      if (channel.status === 1 && autoDisable && channel.auto_ban === 1 && (!outcome.ok || slow)) {
        const reason = outcome.ok ? `response time ${outcome.ms} ms exceeds ${thresholdMs} ms` : outcome.message
        if (await setStatus(deps, channel, 3, reason)) result.disabled++
      } else if (channel.status === 3 && autoEnable && outcome.ok && !slow) {
        if (await setStatus(deps, channel, 1, 'passed a channel test')) result.enabled++
      }
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker))
  return result
}
