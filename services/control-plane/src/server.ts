import { loadControlPlaneConfig } from '@modelgate/config'
import { runService, trustProxyOption } from '@modelgate/service'
import controlPlane from './app.js'

await runService({
  service: 'control-plane',
  loadConfig: loadControlPlaneConfig,
  port: (config) => config.CONTROL_PLANE_PORT,
  trustRequestId: true,
  fastify: (config) => ({ trustProxy: trustProxyOption(config.TRUST_PROXY) }),
  unavailable: () => ({ success: false, message: 'The service is temporarily unavailable, please try again shortly' }),
  register: async (app, config) => { await app.register(controlPlane, { config }) }
})
