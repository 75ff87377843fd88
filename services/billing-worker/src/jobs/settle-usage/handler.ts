import { type OptionValues, UsageEvent } from '@modelgate/contracts'
import { type Database, type Kysely, type SettledUser, type SettlementInput, settleUsage } from '@modelgate/db'
import type { QuotaStore } from '@modelgate/quota'
import { type Job, UnrecoverableError } from 'bullmq'
import { Value } from 'typebox/value'

export interface SettleDeps {
  db: Kysely<Database>
  quota: QuotaStore
  options: () => Promise<OptionValues>
  /** Settles in Postgres (the worker batches); one transaction per event when absent. */
  settle?: (event: SettlementInput, writeLog: boolean) => Promise<SettledUser | undefined>
  /** Sends the low-balance reminder; errors are logged, never fail the settlement. */
  remind?: (to: { email: string, username: string, quota: number }, options: OptionValues) => Promise<void>
}

/** At most one low-balance mail per user per two hours (SPEC.md section 9). */
const REMIND_EVERY_S = 2 * 3600

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
  const writeLog = options.bool('LogConsumeEnabled')
  const user = deps.settle !== undefined ? await deps.settle(event, writeLog) : await settleUsage(deps.db, event, { writeLog })
  const delta = await deps.quota.settle(event.request_id, event.user_id, event.token_id, event.quota)
  const threshold = options.num('QuotaRemindThreshold')
  if (user !== undefined && deps.remind !== undefined && event.quota > 0 && user.email !== '' && user.quota < threshold &&
      user.quota + event.quota >= threshold) {
    // Crossing the threshold triggers it; the key keeps it to one mail per two hours.
    const first = await deps.quota.redis.set(`remind:quota:${event.user_id}`, '1', 'EX', REMIND_EVERY_S, 'NX')
    if (first === 'OK') await deps.remind(user, options)
  }
  return { settled: user !== undefined, delta }
}
