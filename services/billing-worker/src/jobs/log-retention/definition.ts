/**
 * Deletes logs older than LogRetentionDays (0 keeps everything): whole months are truncated,
 * the partly covered month is deleted in batches, so the table stays available. Audit entries
 * older than AuditLogRetentionDays (default 365, 0 keeps everything) go a whole month at a time:
 * a month's partition is dropped once all of it is older, never single entries.
 */
export const logRetentionJob = {
  queue: 'maintenance',
  name: 'log-retention',
  everyMs: 24 * 60 * 60 * 1000,
  attempts: 3,
  backoff: { type: 'exponential', delay: 60_000 }
} as const
