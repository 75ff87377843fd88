import { USAGE_QUEUE } from '@modelgate/contracts'

/**
 * Settles the gateway's usage events, which arrive in batches (one job per few milliseconds of a
 * gateway's traffic). The gateway sets the job id and the attempts/backoff; settlement is
 * idempotent by request id in Postgres and by the reservation key in Redis, so redelivery and
 * retries change nothing twice.
 */
export const settleUsageJob = {
  queue: USAGE_QUEUE,
  /** Jobs one worker holds at once. */
  concurrency: 16,
  /** Events (of every job in hand) that settle in one transaction, waiting at most waitMs for more. */
  batch: { max: 500, waitMs: 10 }
} as const

/**
 * The gateway's events use backoff type `capped`: 1 s doubling to at most 60 s, so an outage of
 * Postgres of any length ends with every event settled, none given up.
 */
export function cappedBackoff (attemptsMade: number, type?: string): number {
  if (type !== 'capped') return 0
  return Math.min(60_000, 1000 * 2 ** Math.max(0, attemptsMade - 1))
}
