import { loadBillingWorkerConfig } from '@modelgate/config'
import { runService } from '@modelgate/service'
import billingWorker from './app.js'

await runService({
  service: 'billing-worker',
  loadConfig: loadBillingWorkerConfig,
  port: (config) => config.BILLING_WORKER_PORT,
  trustRequestId: false,
  register: async (app, config) => { await app.register(billingWorker, { config }) }
})
