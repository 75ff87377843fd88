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

/** What settling one event did: whether Postgres took it now, and the Redis correction. */
export interface SettleOutcome { settled: boolean, delta: number | undefined }

function malformed (data: unknown): string {
  const first = [...Value.Errors(UsageEvent, data)][0]
  return `malformed usage event: ${first?.instancePath ?? ''} ${first?.message ?? ''}`
}

/**
 * Postgres first (the system of record), then the Redis reservation. A crash between the two
 * leaves the job to be retried: Postgres then finds the event settled and Redis gets its
 * correction.
 */
async function settleOne (event: UsageEvent, options: OptionValues, deps: SettleDeps): Promise<SettleOutcome> {
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

/**
 * Settles one job: a single usage event, or a gateway's batch (`{events}`), whose events settle
 * together. A malformed event can never succeed: the batch's good events settle, then the job
 * fails at once with the reason (visible in the failed set); a retry settles nothing twice.
 */
export async function run (job: Pick<Job, 'id' | 'data'>, deps: SettleDeps): Promise<SettleOutcome | { settled: number, events: number }> {
  const data: unknown = job.data
  const batch = typeof data === 'object' && data !== null && Array.isArray((data as { events?: unknown }).events)
    ? (data as { events: unknown[] }).events
    : undefined
  if (batch === undefined) {
    if (!Value.Check(UsageEvent, data)) throw new UnrecoverableError(malformed(data))
    return await settleOne(data, await deps.options(), deps)
  }
  const options = await deps.options()
  const good = batch.filter((e): e is UsageEvent => Value.Check(UsageEvent, e))
  const outcomes = await Promise.all(good.map(async (e) => await settleOne(e, options, deps)))
  if (good.length < batch.length) {
    const bad = batch.filter((e) => !Value.Check(UsageEvent, e))
    throw new UnrecoverableError(`${bad.length} of ${batch.length} events malformed; first: ${malformed(bad[0])}`)
  }
  return { settled: outcomes.filter((o) => o.settled).length, events: batch.length }
}
