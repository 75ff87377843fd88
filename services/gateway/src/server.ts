import { loadGatewayConfig } from '@modelgate/config'
import { exitOnConfigError, runService } from '@modelgate/service'
import gateway from './app.js'

let config
try {
  config = loadGatewayConfig()
} catch (err) {
  exitOnConfigError('gateway', err)
}
await runService({
  service: 'gateway',
  logLevel: config.LOG_LEVEL,
  host: config.HOST,
  port: config.PORT,
  shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
  trustRequestId: false,
  register: async (app) => { await app.register(gateway, { config }) }
})
