import { type OptionValues, UsageEvent } from '@modelgate/contracts'
import { type Database, type Kysely, redisSettlement, type SettledUser, type SettlementInput, settleUsage } from '@modelgate/db'
import type { QuotaStore } from '@modelgate/quota'
import { contextOf, type Span, SpanKind, SpanStatusCode, startSpan, tracing } from '@modelgate/service'
import { type Job, UnrecoverableError } from 'bullmq'
import { Compile } from 'typebox/compile'
import { eventsSettled, settlementLag } from '../../metrics.js'

export interface SettleDeps {
  db: Kysely<Database>
  quota: QuotaStore
  options: () => Promise<OptionValues>
  /** Settles in Postgres (the worker batches); one transaction per event when absent. */
  settle?: (event: SettlementInput, writeLog: boolean) => Promise<SettledUser | undefined>
  /** Sends the low-balance reminder; errors are logged, never fail the settlement. */
  remind?: (to: { email: string, username: string, quota: number }, options: OptionValues) => Promise<void>
}

/** At most one low-balance mail per user per two hours (docs/domain.md). */
const REMIND_EVERY_S = 2 * 3600

/** What settling one event did: whether Postgres took it now, and the Redis correction. */
export interface SettleOutcome { settled: boolean, delta: number | undefined }

/** Compiled once: checking an event is a few function calls, not a walk of the schema. */
const usageEvent = Compile(UsageEvent)

function malformed (data: unknown): string {
  const first = usageEvent.Errors(data)[0]
  return `malformed usage event: ${first?.instancePath ?? ''} ${first?.message ?? ''}`
}

/**
 * Postgres first (the system of record), then the Redis reservations, all of the job's in one
 * script run. A crash between the two leaves the job to be retried: Postgres then finds the
 * events settled and Redis gets its corrections.
 */
async function settleAll (events: readonly UsageEvent[], options: OptionValues, deps: SettleDeps): Promise<SettleOutcome[]> {
  if (!tracing.enabled) return await settleEvents(events, options, deps)
  // Each event's settlement continues the trace of its relay request (its traceparent).
  const spans = events.map((e) => e.traceparent === undefined ? undefined : startSpan('usage.settle', contextOf(e.traceparent), SpanKind.CONSUMER))
  try {
    const outcomes = await settleEvents(events, options, deps)
    outcomes.forEach((o, i) => spans[i]?.setAttribute('modelgate.settled', o.settled))
    return outcomes
  } catch (err) {
    for (const span of spans) span?.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message })
    throw err
  } finally {
    events.forEach((e, i) => endSettleSpan(spans[i], e))
  }
}

function endSettleSpan (span: Span | undefined, e: UsageEvent): void {
  if (span === undefined) return
  span.setAttribute('modelgate.request_id', e.request_id)
  span.setAttribute('modelgate.channel_id', e.channel_id)
  span.setAttribute('modelgate.quota', e.quota)
  span.setAttribute('modelgate.outcome', e.outcome)
  span.end()
}

async function settleEvents (events: readonly UsageEvent[], options: OptionValues, deps: SettleDeps): Promise<SettleOutcome[]> {
  const writeLog = options.bool('LogConsumeEnabled')
  const settled = await Promise.allSettled(events.map(async (event) => deps.settle !== undefined
    ? await deps.settle(event, writeLog)
    : await settleUsage(deps.db, event, { writeLog })))
  // The events Postgres took get their Redis correction even if another one failed (the job is
  // then retried for that one; the others change nothing twice). A refused request reserved
  // nothing: Redis is not touched for it.
  const took = events.filter((e, i) => settled[i]!.status === 'fulfilled' && e.outcome !== 'refused')
  const corrections = await deps.quota.settleMany(took.map(redisSettlement))
  const corrected = new Map(took.map((e, i) => [e, corrections[i]]))
  const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failure !== undefined) throw failure.reason
  const users = settled.map((r) => (r as PromiseFulfilledResult<SettledUser | undefined>).value)
  const threshold = options.num('QuotaRemindThreshold')
  const now = Date.now() / 1000
  for (let i = 0; i < events.length; i++) {
    if (users[i] === undefined) continue
    eventsSettled.inc()
    settlementLag.observe(Math.max(0, now - events[i]!.created_at))
  }
  return await Promise.all(events.map(async (event, i) => {
    const user = users[i]
    if (user !== undefined && deps.remind !== undefined && event.outcome !== 'refused' && event.paid_by === undefined && event.quota > 0 && user.email !== '' && user.quota < threshold &&
        user.quota + event.quota >= threshold) {
      // Crossing the threshold triggers it; the key keeps it to one mail per two hours.
      const first = await deps.quota.redis.set(`remind:quota:${event.user_id}`, '1', 'EX', REMIND_EVERY_S, 'NX')
      if (first === 'OK') await deps.remind(user, options)
    }
    return { settled: user !== undefined, delta: corrected.get(event) }
  }))
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
    if (!usageEvent.Check(data)) throw new UnrecoverableError(malformed(data))
    const [outcome] = await settleAll([data], await deps.options(), deps)
    return outcome!
  }
  const options = await deps.options()
  const good = batch.filter((e): e is UsageEvent => usageEvent.Check(e))
  const outcomes = await settleAll(good, options, deps)
  if (good.length < batch.length) {
    const bad = batch.filter((e) => !usageEvent.Check(e))
    throw new UnrecoverableError(`${bad.length} of ${batch.length} events malformed; first: ${malformed(bad[0])}`)
  }
  return { settled: outcomes.filter((o) => o.settled).length, events: batch.length }
}
