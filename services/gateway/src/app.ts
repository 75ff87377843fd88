import type { GatewayConfig } from '@modelgate/config'
import { dbPlugin, healthPlugin, redisPlugin } from '@modelgate/service'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import controlPlaneProxy from './plugins/app/control-plane-proxy.js'
import relay from './relay/index.js'

export interface GatewayOptions {
  config: Readonly<GatewayConfig>
}

/** The whole gateway as one plugin: relay routes, health, and the proxy to the control plane. */
async function gateway (app: FastifyInstance, { config }: GatewayOptions) {
  await app.register(dbPlugin, { url: config.DATABASE_URL, applicationName: 'gateway', migrate: config.MIGRATE_ON_START })
  // No auto-pipelining: a request makes one Redis call, in its own tick, so a pipeline would
  // carry one command at a higher cost (measured: about 10% more requests a second without).
  await app.register(redisPlugin, { url: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX })
  await app.register(healthPlugin, {})
  await app.register(relay, { config })
  await app.register(controlPlaneProxy, { upstream: config.CONTROL_PLANE_URL })
}

// Not encapsulated: the service's decorators (db, redis, ...) are visible to whoever registers it.
export default fp(gateway, { name: 'gateway-app', fastify: '5.x' })
