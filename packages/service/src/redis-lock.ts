import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'

// Compare-and-act on the lock's token, so a holder never renews or releases a lock that expired
// and was taken by someone else meanwhile.
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

/**
 * Takes the Redis lock `key` for `ttlMs` (SET NX PX) across replicas; the holder's token, or
 * undefined when someone holds it.
 */
export async function acquireLock (redis: Redis, key: string, ttlMs: number): Promise<string | undefined> {
  const token = randomUUID()
  return await redis.set(key, token, 'PX', Math.max(1, Math.round(ttlMs)), 'NX') === 'OK' ? token : undefined
}

/** Extends the lock to `ttlMs` from now if `token` still holds it; false when it does not. */
export async function renewLock (redis: Redis, key: string, token: string, ttlMs: number): Promise<boolean> {
  return await redis.eval(RENEW, 1, key, token, Math.max(1, Math.round(ttlMs))) === 1
}

/** Releases the lock if `token` still holds it. */
export async function releaseLock (redis: Redis, key: string, token: string): Promise<void> {
  await redis.eval(RELEASE, 1, key, token)
}
