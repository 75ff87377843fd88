import type { FastifyRequest } from 'fastify'
import { ApiError } from '../lib/errors.js'
import { M } from '../lib/messages.js'
import type { Deps } from './deps.js'

/**
 * Failed logins before a lockout, per login name and per client address, and the window they are
 * counted in. Counters live in Redis, so every replica sees the same ones. The address is the
 * socket's unless it came through a proxy listed in TRUST_PROXY, so a client rotating
 * X-Forwarded-For stays one address. Wrong passwords, wrong second-factor codes at sign-in and
 * wrong answers to a secure verification all count here.
 */
export const MAX_FAILURES = 10
export const MAX_FAILURES_PER_IP = 20
export const LOCKOUT_S = 15 * 60
export const failuresKey = (login: string) => `login:fail:${login.toLowerCase()}`
export const ipFailuresKey = (ip: string) => `login:fail-ip:${ip}`

const nameKeys = (logins: ReadonlyArray<string | undefined>): string[] =>
  [...new Set(logins.filter((l): l is string => l !== undefined && l !== '').map(failuresKey))]

/**
 * Refuses with 429 and Retry-After while any of the login names or the client's address is
 * locked; a refused attempt still counts against the address. Counted per name whether or not
 * it exists, so the lockout reveals nothing; while locked, even the right answer is refused.
 */
export async function refuseWhileLocked ({ redis }: Deps<'redis'>, req: FastifyRequest, logins: ReadonlyArray<string | undefined>): Promise<void> {
  const keys = nameKeys(logins)
  const ipKey = ipFailuresKey(req.ip)
  const counts = await redis.mget(...keys, ipKey)
  const lockedNames = keys.filter((_key, i) => Number(counts[i] ?? 0) >= MAX_FAILURES)
  const ipLocked = Number(counts[keys.length] ?? 0) >= MAX_FAILURES_PER_IP
  if (lockedNames.length === 0 && !ipLocked) return
  const multi = redis.multi().set(ipKey, 0, 'EX', LOCKOUT_S, 'NX').incr(ipKey).ttl(ipKey)
  for (const key of lockedNames) multi.ttl(key)
  const [, , ipTtl, ...nameTtls] = (await multi.exec()) ?? []
  // Retry-After: when the latest of the locks that hold (the names', the address's) ends.
  const locks = [...nameTtls.map((r) => Number(r?.[1])), ipLocked ? Number(ipTtl?.[1]) : 0]
  const wait = Math.min(LOCKOUT_S, Math.max(1, ...locks.filter((n) => Number.isFinite(n))))
  throw new ApiError(429, M.tooManyLoginAttempts, { minutes: LOCKOUT_S / 60 }, { 'retry-after': String(wait) })
}

/** Counts one failure against each login name and the client's address. */
export async function countLoginFailure ({ redis }: Deps<'redis'>, req: FastifyRequest, logins: ReadonlyArray<string | undefined>): Promise<void> {
  const ipKey = ipFailuresKey(req.ip)
  const multi = redis.multi()
  for (const key of nameKeys(logins)) multi.incr(key).expire(key, LOCKOUT_S)
  await multi.set(ipKey, 0, 'EX', LOCKOUT_S, 'NX').incr(ipKey).exec()
}

/** Forgets the failures of the login names after a complete sign-in (the address's count stays). */
export async function clearLoginFailures ({ redis }: Deps<'redis'>, logins: ReadonlyArray<string | undefined>): Promise<void> {
  const keys = nameKeys(logins)
  if (keys.length > 0) await redis.del(...keys)
}

/** Whether the login name is locked now. */
export async function isLoginLocked ({ redis }: Deps<'redis'>, login: string): Promise<boolean> {
  return Number(await redis.get(failuresKey(login)) ?? 0) >= MAX_FAILURES
}
