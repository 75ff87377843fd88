/**
 * Ends subscriptions whose period is over, and renews from the wallet those set to renew: a
 * renewal is a new period (fresh entitlement items) paid by the plan's price in quota. Every
 * minute, so a period ends within a minute of its end (the gateways stop using an item at its
 * end on their own: they check its end time at admission).
 */
export const subscriptionsJob = {
  queue: 'maintenance',
  name: 'subscription-periods',
  everyMs: 60_000,
  attempts: 3,
  backoff: { type: 'exponential', delay: 10_000 }
} as const
