/**
 * Repairs cached balances that drifted from Postgres: a reservation that expired before its
 * settlement, a lost correction, a console change that raced a cold cache. Runs every five
 * minutes; idempotent, and safe next to live traffic (see the handler).
 */
export const reconcileBalancesJob = {
  queue: 'maintenance',
  name: 'reconcile-balances',
  everyMs: 5 * 60 * 1000,
  attempts: 3,
  backoff: { type: 'exponential', delay: 10_000 }
} as const
