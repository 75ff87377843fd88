import { configChannel, type OptionValues } from '@modelgate/contracts'
import { type Database, findChannelsByStatus, type Kysely } from '@modelgate/db'
import { type ChannelTestsResult, type SecretBox, testChannels } from '@modelgate/service'
import type { Redis } from 'ioredis'
import { channelTestsJob } from './definition.js'

export interface ChannelTestDeps {
  db: Kysely<Database>
  redis: Redis
  keyPrefix: string
  box: SecretBox
  options: () => Promise<OptionValues>
}

export async function run (deps: ChannelTestDeps): Promise<ChannelTestsResult> {
  const options = await deps.options()
  if (!options.bool('AutomaticDisableChannelEnabled') && !options.bool('AutomaticEnableChannelEnabled')) return { tested: 0, disabled: 0, enabled: 0 }
  // Enabled ones may need disabling and auto-disabled ones re-enabling; an admin's disable stands.
  const channels = await findChannelsByStatus(deps.db, [1, 3])
  return await testChannels({
    db: deps.db,
    box: deps.box,
    options,
    publish: async (change) => { await deps.redis.publish(configChannel(deps.keyPrefix), JSON.stringify(change)) }
  }, channels, { parallel: channelTestsJob.parallel })
}
