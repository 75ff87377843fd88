import { createServer, type Server } from 'node:http'
import { createDb, ensureAuditLogPartitions, ensureLogPartitions, migrateToLatest } from '@modelgate/db'
import type { FastifyBaseLogger } from 'fastify'

/** Options of {@link listenWhileStarting}. */
export interface ListenWhileStartingOptions {
  host: string
  port: number
  backlog?: number
  /** Body of the 503 every other route gets; a generic one by default. */
  unavailable?: () => unknown
  /** What /readyz names as the check that is not yet done; `migrating` by default. */
  check?: string
}

/** A {@link listenWhileStarting} server: close it right before the service itself listens. */
export interface StartingServer {
  server: Server
  close: () => Promise<void>
}

const DEFAULT_UNAVAILABLE = () => ({ message: 'the service is starting (applying database migrations), try again shortly' })

/**
 * Listens on the service's port before the service is built, so an orchestrator sees a live
 * process during a long migration: `GET /healthz` answers 200 (alive), `GET /readyz` 503 with
 * the `migrating` check, and every other request 503 (Retry-After: 5) in the service's error
 * shape. No route of the service is served until {@link StartingServer.close} hands the port over.
 */
export async function listenWhileStarting (opts: ListenWhileStartingOptions): Promise<StartingServer> {
  const check = opts.check ?? 'migrating'
  const unavailable = opts.unavailable ?? DEFAULT_UNAVAILABLE
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const text = JSON.stringify(body)
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...headers })
      res.end(req.method === 'HEAD' ? undefined : text)
    }
    // The body is not read: drain it so keep-alive connections stay usable.
    req.resume()
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) return send(200, { status: 'ok' })
    if (path === '/readyz' && (req.method === 'GET' || req.method === 'HEAD')) {
      return send(503, { ready: false, checks: { [check]: { ok: false, detail: 'applying database migrations' } } })
    }
    send(503, unavailable(), { 'retry-after': '5' })
  })
  server.keepAliveTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host: opts.host, port: opts.port, backlog: opts.backlog ?? 511 }, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return {
    server,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => { resolve() })
        server.closeAllConnections()
      })
    }
  }
}

/**
 * Applies pending migrations (under the advisory lock: replicas starting together queue and the
 * later ones find nothing to do) and creates the upcoming logs partitions, on a connection of its
 * own. Throws what failed.
 */
export async function migrateDatabase (url: string, applicationName: string, log: FastifyBaseLogger): Promise<string[]> {
  // Two connections: one holds the advisory lock, the migrator runs on the other.
  const db = createDb(url, { max: 2, applicationName })
  try {
    log.info('applying database migrations')
    const started = Date.now()
    const { applied, newer } = await migrateToLatest(db)
    if (newer.length > 0) log.warn({ newer }, 'the database was migrated by a newer release (a rollback?): running on its schema')
    await ensureLogPartitions(db)
    await ensureAuditLogPartitions(db)
    log.info({ applied, ms: Date.now() - started }, applied.length > 0 ? 'database migrations applied' : 'database schema is up to date')
    return applied
  } finally {
    await db.destroy()
  }
}
