import { CHANNEL_STATUS, type ConfigChange, configChannel, type OptionValues } from '@modelgate/contracts'
import { type Database, findChannelsByStatus, type Kysely } from '@modelgate/db'
import { type ChannelTestsResult, redisCredentialStore, type SecretBox, testChannels } from '@modelgate/service'
import type { Outbound } from '@modelgate/providers'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { channelTestsJob } from './definition.js'

export interface ChannelTestDeps {
  db: Kysely<Database>
  redis: Redis
  keyPrefix: string
  box: SecretBox
  options: () => Promise<OptionValues>
  /** Where failures to write renewed OAuth credentials back are reported; absent: not reported. */
  log?: Pick<FastifyBaseLogger, 'warn'>
  /** The outbound guard the tests go through; absent: the default guard. */
  outbound?: Outbound
}

export async function run (deps: ChannelTestDeps): Promise<ChannelTestsResult> {
  const options = await deps.options()
  if (!options.bool('AutomaticDisableChannelEnabled') && !options.bool('AutomaticEnableChannelEnabled')) return { tested: 0, disabled: 0, enabled: 0 }
  // Enabled ones may need disabling and auto-disabled ones re-enabling; an admin's disable stands.
  const channels = await findChannelsByStatus(deps.db, [CHANNEL_STATUS.enabled, CHANNEL_STATUS.autoDisabled])
  const publish = async (change: ConfigChange): Promise<void> => { await deps.redis.publish(configChannel(deps.keyPrefix), JSON.stringify(change)) }
  // Tests renew OAuth tokens (Claude Code, Codex) as requests do: shared with the gateways, written back.
  const credentials = redisCredentialStore({ redis: deps.redis, db: deps.db, box: deps.box, publish, log: deps.log ?? { warn: () => {} } })
  return await testChannels({ db: deps.db, box: deps.box, options, publish, credentials, ...(deps.outbound === undefined ? {} : { outbound: deps.outbound }) }, channels, { parallel: channelTestsJob.parallel })
}
