import type { AddressInfo } from 'node:net'
import billingWorker from '@modelgate/billing-worker'
import { loadBillingWorkerConfig, loadControlPlaneConfig, loadGatewayConfig } from '@modelgate/config'
import controlPlane from '@modelgate/control-plane'
import gateway from '@modelgate/gateway'
import { fastifyOptions } from '@modelgate/service'
import { createServiceEnv } from '@modelgate/testing'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'

/** The whole system on 127.0.0.1 as a user meets it: the gateway's address serves the console, /api and /v1. */
export interface System {
  /** The gateway's address (what a browser opens). */
  url: string
  gateway: FastifyInstance
  controlPlane: FastifyInstance
  worker: FastifyInstance
  env: Record<string, string>
}

async function listen (app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

/**
 * Starts the control plane, the gateway and the billing worker on a fresh database and Redis
 * prefix, in this process, with the built console (`npm run build` of web). Closed at teardown.
 */
export async function startSystem (t: Test, env: Record<string, string> = {}): Promise<System> {
  const base = { ...await createServiceEnv(t), STATE_REFRESH_MS: '60000', ...env }
  const cp = Fastify(fastifyOptions('control-plane', 'silent', { trustRequestId: true }))
  await cp.register(controlPlane, { config: loadControlPlaneConfig(base) })
  const cpUrl = await listen(cp)
  const gw = Fastify(fastifyOptions('gateway', 'silent', { trustRequestId: false }))
  await gw.register(gateway, { config: loadGatewayConfig({ ...base, CONTROL_PLANE_URL: cpUrl }) })
  const url = await listen(gw)
  const worker = Fastify(fastifyOptions('billing-worker', 'silent', { trustRequestId: false }))
  await worker.register(billingWorker, { config: loadBillingWorkerConfig(base) })
  await worker.ready()
  t.teardown(async () => {
    await gw.close()
    await worker.close()
    await cp.close()
  })
  return { url, gateway: gw, controlPlane: cp, worker, env: base }
}
