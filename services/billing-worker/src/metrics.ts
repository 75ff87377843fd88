import { channelsAutoDisabled, counter, gauge, histogram } from '@modelgate/service'

/**
 * The billing worker's domain metrics (served on METRICS_PORT with the process's others).
 * Label values come from small fixed sets.
 */

export const eventsSettled = counter('modelgate_usage_events_settled_total', 'Usage events settled: taken by Postgres now (a redelivered event already settled is not counted again)')
export const settlementLag = histogram('modelgate_settlement_lag_seconds',
  'Time from a usage event\'s request (its created_at, whole seconds) to its settlement in Postgres',
  [], [1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600])
export const settlementBatchDuration = histogram('modelgate_settlement_batch_duration_seconds',
  'One settlement transaction of a batch of usage events in Postgres', [], [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30])
export const settlementBatchEvents = counter('modelgate_settlement_batch_events_total', 'Usage events handed to settlement transactions (with modelgate_settlement_batch_duration_seconds_count: events per transaction)')
export const eventsFailed = counter('modelgate_usage_events_failed_total',
  'Usage events of settlement jobs that failed, by final: no (retried later, e.g. Postgres away) or yes (malformed: left in the failed set, settled by no one)',
  ['final'])

/** Job counts of the usage queue by state, read when scraped (`source` answers them). */
let queueCounts: (() => Promise<Record<string, number>>) | undefined
/** Where modelgate_usage_queue_jobs reads from; undefined stops it. */
export function setUsageQueueCounts (source: (() => Promise<Record<string, number>>) | undefined): void {
  queueCounts = source
}
const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const
gauge('modelgate_usage_queue_jobs', 'Jobs (batches of usage events) on the usage queue by state: waiting, active, delayed (retry backoff), failed (given up: malformed)',
  ['state'], async function () {
    if (queueCounts === undefined) return
    // A scrape never waits on an unreachable Redis: the figures are left as they were.
    let timer: NodeJS.Timeout | undefined
    const counts = await Promise.race([
      queueCounts(),
      new Promise<undefined>((resolve) => { timer = setTimeout(() => { resolve(undefined) }, 1_000) })
    ]).catch(() => undefined).finally(() => { clearTimeout(timer) })
    if (counts === undefined) return
    for (const state of QUEUE_STATES) this.set({ state }, (state === 'waiting' ? (counts['wait'] ?? 0) + (counts['prioritized'] ?? 0) : counts[state]) ?? 0)
  })

export const tasksPolled = counter('modelgate_tasks_polled_total', 'Unfinished drawing, music and video tasks asked about upstream')
export const tasksRefunded = counter('modelgate_tasks_refunded_total', 'Tasks failed and refunded, by reason: failed (upstream failure or channel deleted) or timed_out', ['reason'])
export const reconcileCorrections = counter('modelgate_reconcile_corrections_total',
  'Reconciliation corrections, by kind: repaired (a cached Redis balance set back to Postgres) or orphan (a reservation whose gateway died, settled at its estimate)',
  ['kind'])

// Every series of a fixed label set exists from the start at 0: Prometheus' increase() misses a
// series' first increment when the series appears with it.
for (const final of ['yes', 'no']) eventsFailed.inc({ final }, 0)
for (const reason of ['failed', 'timed_out']) tasksRefunded.inc({ reason }, 0)
for (const kind of ['repaired', 'orphan']) reconcileCorrections.inc({ kind }, 0)
channelsAutoDisabled.inc({ source: 'channel_test' }, 0)

export { channelsAutoDisabled }
