import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import billingWorker from '@modelgate/billing-worker'
import { loadBillingWorkerConfig, loadControlPlaneConfig, loadGatewayConfig, loadTestConfig } from '@modelgate/config'
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
 * A private copy of the built console. A build of web/ replaces web/dist while tests run (while
 * developing), and the control plane lists the files it serves once, at start: a copy keeps every
 * chunk the pages ask for. A copy taken halfway through a build misses files and is taken again.
 * E2E_WEB_DIST names another build to test (one built with `vite build --outDir`, so that
 * several people can test their own console builds in one checkout).
 */
async function consoleSnapshot (t: Test): Promise<string> {
  const src = loadTestConfig().E2E_WEB_DIST ?? join(dirname(createRequire(import.meta.url).resolve('@modelgate/web/package.json')), 'dist')
  for (let attempt = 0; attempt < 20; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'console-'))
    t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
    try {
      cpSync(src, dir, { recursive: true })
      const assets = readdirSync(join(dir, 'assets'))
      const texts = [readFileSync(join(dir, 'index.html'), 'utf8'), ...assets.filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(dir, 'assets', f), 'utf8'))]
      const wanted = texts.flatMap((text) => [...text.matchAll(/["/]([A-Za-z0-9_-]+-[A-Za-z0-9_-]{8}\.(?:js|css))"/g)].map((m) => m[1] ?? ''))
      if (assets.length > 0 && wanted.every((f) => assets.includes(f))) return dir
    } catch {
      // web/dist was being emptied by a build: try again.
    }
    await delay(500)
  }
  throw new Error(`no complete console build in ${src} (run npm run build)`)
}

/**
 * Starts the control plane, the gateway and the billing worker on a fresh database and Redis
 * prefix, in this process, with the built console (`npm run build` of web). Closed at teardown.
 */
export async function startSystem (t: Test, env: Record<string, string> = {}): Promise<System> {
  const base = { ...await createServiceEnv(t), STATE_REFRESH_MS: '60000', WEB_DIST_DIR: await consoleSnapshot(t), ...env }
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
