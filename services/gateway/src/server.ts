import { loadGatewayConfig } from '@modelgate/config'
import { runService } from '@modelgate/service'
import gateway from './app.js'

await runService({
  service: 'gateway',
  loadConfig: loadGatewayConfig,
  port: (config) => config.PORT,
  trustRequestId: false,
  register: async (app, config) => { await app.register(gateway, { config }) }
})
