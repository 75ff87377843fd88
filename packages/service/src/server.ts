import { randomUUID } from 'node:crypto'
import { loggerOptions } from '@modelgate/logger'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'

/** What {@link runService} needs to know about a service. */
export interface RunServiceOptions {
  service: string
  logLevel: string
  host: string
  port: number
  /** Longest wait for in-flight work on SIGTERM/SIGINT before the process exits anyway. */
  shutdownGraceMs: number
  /** Registers the service (its app.ts plugin) on the instance. */
  register: (app: FastifyInstance) => Promise<void> | void
  /** Take X-Request-Id from the caller (internal services only). */
  trustRequestId: boolean
  fastify?: FastifyServerOptions
}

/**
 * Fastify options every service shares: redacting logger, request ids, sane timeouts.
 * The public edge (the gateway) mints its own request ids, since they later key billing; internal
 * services take the gateway's from X-Request-Id so one id follows a request across services.
 */
export function fastifyOptions (service: string, logLevel: string, opts: { trustRequestId: boolean }): FastifyServerOptions {
  return {
    logger: loggerOptions({ service, level: logLevel }),
    requestIdHeader: opts.trustRequestId ? 'x-request-id' : false,
    genReqId: () => randomUUID(),
    requestIdLogLabel: 'request_id',
    disableRequestLogging: false,
    connectionTimeout: 0,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle'
  }
}

/**
 * Builds the service, listens, and closes it gracefully on SIGTERM or SIGINT: stop accepting,
 * finish in-flight requests and jobs (onClose hooks), close pools, exit 0. A second signal, or
 * the grace period running out, exits at once with code 1.
 */
export async function runService (opts: RunServiceOptions): Promise<FastifyInstance> {
  const app = Fastify({ ...fastifyOptions(opts.service, opts.logLevel, { trustRequestId: opts.trustRequestId }), ...opts.fastify })
  let closing = false
  const shutdown = (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting now')
      process.exit(1)
    }
    closing = true
    app.log.info({ signal }, 'shutting down')
    const timer = setTimeout(() => {
      app.log.error({ graceMs: opts.shutdownGraceMs }, 'graceful shutdown timed out')
      process.exit(1)
    }, opts.shutdownGraceMs)
    timer.unref()
    app.close().then(() => {
      app.log.info('stopped')
      process.exit(0)
    }, (err: unknown) => {
      app.log.error({ err }, 'error while shutting down')
      process.exit(1)
    })
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))

  try {
    await opts.register(app)
    await app.listen({ host: opts.host, port: opts.port })
  } catch (err) {
    app.log.fatal({ err }, 'failed to start')
    await app.close().catch(() => {})
    process.exit(1)
  }
  return app
}

/** Prints a configuration error for humans and exits 1 (config is read before any logger exists). */
export function exitOnConfigError (service: string, err: unknown): never {
  process.stderr.write(`${service}: ${(err as Error).message}\n`)
  process.exit(1)
}
