import { loadControlPlaneConfig } from '@modelgate/config'
import { exitOnConfigError, runService } from '@modelgate/service'
import controlPlane from './app.js'

let config
try {
  config = loadControlPlaneConfig()
} catch (err) {
  exitOnConfigError('control-plane', err)
}
await runService({
  service: 'control-plane',
  logLevel: config.LOG_LEVEL,
  host: config.HOST,
  port: config.CONTROL_PLANE_PORT,
  shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
  fastify: { trustProxy: config.TRUST_PROXY },
  trustRequestId: true,
  register: async (app) => { await app.register(controlPlane, { config }) }
})
