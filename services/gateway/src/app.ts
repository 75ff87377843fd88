import type { GatewayConfig } from '@modelgate/config'
import { dbPlugin, edgeProof, healthPlugin, outboundPlugin, redisPlugin, trustProxyOption, type TrustProxyOption } from '@modelgate/service'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import controlPlaneProxy from './plugins/app/control-plane-proxy.js'
import edge from './plugins/app/edge.js'
import relay from './plugins/app/relay.js'
import relayRoutes from './routes/index.js'

/**
 * Fastify's `trustProxy` for the gateway: the public edge believes X-Forwarded-For (and
 * X-Forwarded-Proto) only from the load balancers named in GATEWAY_TRUST_PROXY (addresses, or a
 * hop count), so a client cannot pick the address that per-IP limits, token IP allow lists, usage
 * logs and the control plane's throttles count. Off by default.
 */
export function gatewayTrustProxy (config: Pick<GatewayConfig, 'GATEWAY_TRUST_PROXY'>): TrustProxyOption {
  return trustProxyOption(config.GATEWAY_TRUST_PROXY)
}

export interface GatewayOptions {
  config: Readonly<GatewayConfig>
}

/** The whole gateway as one plugin: relay routes, health, and the proxy to the control plane. */
async function gateway (app: FastifyInstance, { config }: GatewayOptions) {
  // First: the edge's rules run before every other hook and route.
  await app.register(edge, { maxConnectionsPerIp: config.GATEWAY_MAX_CONNECTIONS_PER_IP, trustProxy: gatewayTrustProxy(config) })
  await app.register(dbPlugin, { url: config.DATABASE_URL, applicationName: 'gateway', max: config.PG_POOL_MAX, migrate: config.MIGRATE_ON_START })
  // No auto-pipelining: a request makes one Redis call, in its own tick, so a pipeline would
  // carry one command at a higher cost (measured: about 10% more requests a second without).
  await app.register(redisPlugin, { url: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX })
  await app.register(healthPlugin, {})
  await app.register(outboundPlugin, { config })
  await app.register(relay, { config })
  await app.register(relayRoutes, { config })
  // Metrics are served on METRICS_PORT only: here, /metrics is a plain 404 (not the console's page).
  const noMetrics = async (_req: FastifyRequest, reply: FastifyReply) => await reply.code(404).send({ error: { message: 'Not found', type: 'invalid_request_error', code: 'not_found' } })
  app.all('/metrics', noMetrics)
  app.all('/metrics/*', noMetrics)
  await app.register(controlPlaneProxy, { upstream: config.CONTROL_PLANE_URL, connections: config.CONTROL_PLANE_CONNECTIONS, proof: edgeProof(config.SESSION_SECRET) })
}

// Not encapsulated: the service's decorators (db, redis, ...) are visible to whoever registers it.
export default fp(gateway, { name: 'gateway-app', fastify: '5.x' })
