import { type OptionValues, UsageEvent } from '@modelgate/contracts'
import { type Database, type Kysely, settleUsage } from '@modelgate/db'
import type { QuotaStore } from '@modelgate/quota'
import { type Job, UnrecoverableError } from 'bullmq'
import { Value } from 'typebox/value'

export interface SettleDeps {
  db: Kysely<Database>
  quota: QuotaStore
  options: () => Promise<OptionValues>
}

/**
 * Postgres first (the system of record), then the Redis reservation. A crash between the two
 * leaves the job to be retried: Postgres then finds the event settled and Redis gets its
 * correction. A malformed event can never succeed and fails at once (visible in the failed set).
 */
export async function run (job: Pick<Job, 'id' | 'data'>, deps: SettleDeps): Promise<{ settled: boolean, delta: number | undefined }> {
  if (!Value.Check(UsageEvent, job.data)) {
    const first = [...Value.Errors(UsageEvent, job.data)][0]
    throw new UnrecoverableError(`malformed usage event: ${first?.instancePath ?? ''} ${first?.message ?? ''}`)
  }
  const event = job.data
  const options = await deps.options()
  const settled = await settleUsage(deps.db, event, { writeLog: options.bool('LogConsumeEnabled') })
  const delta = await deps.quota.settle(event.request_id, event.user_id, event.token_id, event.quota)
  return { settled, delta }
}
