import { USAGE_QUEUE } from '@modelgate/contracts'

/**
 * Settles the gateway's usage events. The gateway sets the job id to the request id and the
 * attempts/backoff; settlement is idempotent by request id in Postgres and by the reservation
 * key in Redis, so redelivery and retries change nothing twice.
 */
export const settleUsageJob = {
  queue: USAGE_QUEUE,
  /** Events settled in parallel by one worker. */
  concurrency: 16
} as const
