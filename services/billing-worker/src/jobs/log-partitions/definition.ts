/**
 * Keeps the monthly logs and audit_logs partitions ahead of time: last month through two months ahead.
 * Idempotent (creating an existing partition is a no-op), so redelivery and overlapping
 * schedules on several workers are harmless.
 */
export const logPartitionsJob = {
  queue: 'maintenance',
  name: 'log-partitions',
  /** Every 6 hours; a month boundary is never more than 6 hours away from a run. */
  everyMs: 6 * 60 * 60 * 1000,
  attempts: 5,
  backoff: { type: 'exponential', delay: 10_000 }
} as const
