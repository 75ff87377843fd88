import { loadGatewayConfig } from '@modelgate/config'
import { runService } from '@modelgate/service'
import gateway, { gatewayTrustProxy } from './app.js'
import { limitHeapGrowth } from './heap.js'

await runService({
  service: 'gateway',
  // The grace period covers the drain: in-flight streams get DRAIN_TIMEOUT_MS, then are cut and
  // their usage events sent, before the process would be ended with code 1.
  loadConfig: () => {
    const config = loadGatewayConfig()
    return { ...config, SHUTDOWN_GRACE_MS: Math.max(config.SHUTDOWN_GRACE_MS, config.DRAIN_TIMEOUT_MS + 15_000) }
  },
  port: (config) => config.PORT,
  trustRequestId: false,
  fastify: (config) => ({ trustProxy: gatewayTrustProxy(config) }),
  // While migrations run at start, in OpenAI's error shape like every relay refusal.
  unavailable: () => ({ error: { message: 'The gateway is starting (applying database migrations), please try again shortly', type: 'service_unavailable', code: 'starting' } }),
  register: async (app, config) => {
    limitHeapGrowth(config.HEAP_GROWTH_PERCENT)
    await app.register(gateway, { config })
  }
})
