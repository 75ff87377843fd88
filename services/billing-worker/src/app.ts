import type { BillingWorkerConfig } from '@modelgate/config'
import { dbPlugin, healthPlugin, outboundPlugin, redisPlugin } from '@modelgate/service'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import workerPlugin from './worker.js'

export interface BillingWorkerOptions {
  config: Readonly<BillingWorkerConfig>
}

/** The billing worker: BullMQ consumers plus /healthz and /readyz for the orchestrator. */
async function billingWorker (app: FastifyInstance, { config }: BillingWorkerOptions) {
  await app.register(dbPlugin, { url: config.DATABASE_URL, applicationName: 'billing-worker', max: config.PG_POOL_MAX, migrate: config.MIGRATE_ON_START })
  // A batch's reservations are settled by commands issued together: one write, not one per event.
  await app.register(redisPlugin, { url: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX, autoPipelining: true })
  await app.register(outboundPlugin, { config })
  await app.register(workerPlugin, {
    redisUrl: config.REDIS_URL,
    prefix: `${config.REDIS_KEY_PREFIX}bull`,
    keyPrefix: config.REDIS_KEY_PREFIX,
    cryptoSecret: config.CRYPTO_SECRET,
    channelTestEveryMs: config.CHANNEL_TEST_INTERVAL_MINUTES * 60_000,
    lockMs: config.WORKER_LOCK_MS,
    reconcileEveryMs: config.RECONCILE_INTERVAL_MS,
    orphanAfterMs: config.ORPHAN_RESERVATION_MS,
    taskPollEveryMs: config.TASK_POLL_INTERVAL_MS,
    taskTimeoutMs: config.TASK_TIMEOUT_MINUTES * 60_000
  })
  await app.register(healthPlugin, {
    extraChecks: {
      workers: async () => {
        if (!app.maintenance.worker.isRunning()) throw new Error('maintenance worker is not running')
        if (!app.settlement.worker.isRunning()) throw new Error('settlement worker is not running')
      }
    }
  })
}

// Not encapsulated: the service's decorators (db, redis, ...) are visible to whoever registers it.
export default fp(billingWorker, { name: 'billing-worker-app', fastify: '5.x' })
