import { loadBillingWorkerConfig } from '@modelgate/config'
import { exitOnConfigError, runService } from '@modelgate/service'
import billingWorker from './app.js'

let config
try {
  config = loadBillingWorkerConfig()
} catch (err) {
  exitOnConfigError('billing-worker', err)
}
await runService({
  service: 'billing-worker',
  logLevel: config.LOG_LEVEL,
  host: config.HOST,
  port: config.BILLING_WORKER_PORT,
  shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
  trustRequestId: false,
  register: async (app) => { await app.register(billingWorker, { config }) }
})
