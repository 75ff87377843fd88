/**
 * Drops settlement idempotency records once no redelivery can come: BullMQ keeps a failed event
 * for retries far shorter than the 14 days kept here.
 */
export const pruneSettlementsJob = {
  queue: 'maintenance',
  name: 'prune-settlements',
  everyMs: 24 * 60 * 60 * 1000,
  keepSeconds: 14 * 24 * 3600,
  attempts: 3,
  backoff: { type: 'exponential', delay: 60_000 }
} as const
