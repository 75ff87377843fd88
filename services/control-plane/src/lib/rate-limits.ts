import type { FastifyRequest } from 'fastify'

/**
 * A route's rate limit (`config.rateLimit`) of `max` calls a minute counted per signed-in user (by
 * address before sign-in), not per address: one user cannot go faster from many addresses, and
 * users behind one address do not share a budget. Each route counts on its own.
 */
export function perUserPerMinute (max: number, scope = ''): { max: number, timeWindow: string, keyGenerator: (req: FastifyRequest) => string } {
  return { max, timeWindow: '1 minute', keyGenerator: (req) => `${scope}u${req.auth?.user.id ?? req.ip}` }
}

/** Starting a payment (a checkout, an epay order): a person pays a few times a minute at most. */
export const PAY_RATE_LIMIT = perUserPerMinute(20)
