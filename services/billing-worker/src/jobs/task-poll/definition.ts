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
  /** How long a claim holds: longer than one round's calls, short enough for a dead poller's tasks to come back soon. */
  leaseMs: 120_000,
  /** Time for one poll request. */
  requestTimeoutMs: 30_000
} as const
