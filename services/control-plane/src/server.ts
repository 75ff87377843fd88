import { loadControlPlaneConfig } from '@modelgate/config'
import { runService } from '@modelgate/service'
import controlPlane from './app.js'

await runService({
  service: 'control-plane',
  loadConfig: loadControlPlaneConfig,
  port: (config) => config.CONTROL_PLANE_PORT,
  trustRequestId: true,
  fastify: (config) => ({ trustProxy: config.TRUST_PROXY }),
  register: async (app, config) => { await app.register(controlPlane, { config }) }
})
