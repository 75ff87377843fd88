import { randomUUID } from 'node:crypto'
import { loadBillingWorkerConfig } from '@modelgate/config'
import { OptionValues, USAGE_QUEUE } from '@modelgate/contracts'
import { createDb } from '@modelgate/db'
import { QuotaStore } from '@modelgate/quota'
import { bullConnection } from '@modelgate/service'
import { createServiceEnv } from '@modelgate/testing'
import { Queue } from 'bullmq'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import type { Test } from 'tap'
import billingWorker from '../src/app.js'

/** A worker's environment of its own: a migrated database and a Redis key prefix, with clients on both (closed at teardown). */
export async function workerEnv (t: Test) {
  const env = await createServiceEnv(t)
  const db = createDb(env.DATABASE_URL!)
  t.teardown(() => db.destroy())
  const redis = new Redis(env.REDIS_URL!, { keyPrefix: env.REDIS_KEY_PREFIX })
  t.teardown(() => { redis.disconnect() })
  return { env, db, redis }
}

/** The billing worker running on `env`, and the usage queue a gateway publishes to (both closed at teardown). */
export async function runningWorker (t: Test, env: Record<string, string>): Promise<Queue> {
  const app = Fastify()
  await app.register(billingWorker, { config: loadBillingWorkerConfig(env) })
  await app.ready()
  t.teardown(() => app.close())
  const queue = new Queue(USAGE_QUEUE, { connection: bullConnection(env.REDIS_URL!), prefix: `${env.REDIS_KEY_PREFIX}bull` })
  t.teardown(() => queue.close())
  return queue
}

/**
 * What settlement tests work on: {@link workerEnv}, one user (`username`, 1,000,000 quota) with
 * one token (500,000) and one channel, and the handler's dependencies with consume logs on
 * (`setLogs` turns them off and on).
 */
export async function settleSetup (t: Test, username: string) {
  const { env, db, redis } = await workerEnv(t)
  const quota = new QuotaStore(redis)
  const user = await db.insertInto('users').values({ username, quota: 1_000_000, access_token_hash: null, aff_code: null, deleted_at: null, setting: {} }).returningAll().executeTakeFirstOrThrow()
  const token = await db.insertInto('tokens').values({ user_id: user.id, name: 'tok', key_hash: randomUUID(), key_encrypted: 'x', remain_quota: 500_000, accessed_time: 1000, deleted_at: null }).returningAll().executeTakeFirstOrThrow()
  const channel = await db.insertInto('channels').values({ key: 'k', openai_organization: null, tag: null, other_info: {} }).returningAll().executeTakeFirstOrThrow()
  let logs = 'true'
  const options = async () => new OptionValues(new Map([['LogConsumeEnabled', logs]]))
  return { env, db, redis, quota, user, token, channel, deps: { db, quota, options }, setLogs: (v: boolean) => { logs = String(v) } }
}
