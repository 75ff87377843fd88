import { loadGatewayConfig } from '@modelgate/config'
import { runService } from '@modelgate/service'
import gateway from './app.js'
import { limitHeapGrowth } from './heap.js'

await runService({
  service: 'gateway',
  loadConfig: loadGatewayConfig,
  port: (config) => config.PORT,
  trustRequestId: false,
  register: async (app, config) => {
    limitHeapGrowth(config.HEAP_GROWTH_PERCENT)
    await app.register(gateway, { config })
  }
})
