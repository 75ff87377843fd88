/**
 * Polls unfinished asynchronous tasks (drawing, music, video) upstream: progress, results and
 * failures (refunded exactly once), and fails and refunds tasks past TASK_TIMEOUT_MINUTES. Its
 * own queue, so a long channel test never delays it; one job per tick across replicas, and each
 * task claimed by one poller at a time (a lease in Postgres).
 */
export const taskPollJob = {
  queue: 'tasks',
  name: 'task-poll',
  attempts: 1,
  backoff: { type: 'fixed', delay: 10_000 },
  /** Tasks claimed per table and round. */
  claim: 500,
  /** Longest time for one poll request. */
  requestTimeoutMs: 30_000
} as const

/**
 * How long a claim holds at a poll interval of `everyMs`: four intervals, at least 10 s and at most
 * 2 minutes. Long enough for a round's calls (each limited to half of it), short enough that a
 * poller that died gives its tasks back soon.
 */
export function taskLeaseMs (everyMs: number): number {
  return Math.min(120_000, Math.max(10_000, everyMs * 4))
}
