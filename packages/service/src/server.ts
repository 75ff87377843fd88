import { randomUUID } from 'node:crypto'
import { loggerOptions } from '@modelgate/logger'
import { lazyRequestLogger } from './request-logger.js'
import { buildValidator } from './validation.js'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'

/** The configuration fields every service has. */
export interface CommonServiceConfig {
  LOG_LEVEL: string
  HOST: string
  SHUTDOWN_GRACE_MS: number
}

/** What {@link runService} needs to know about a service. */
export interface RunServiceOptions<C extends CommonServiceConfig> {
  service: string
  /** Reads and validates the environment; a ConfigError stops the process with its message. */
  loadConfig: () => Readonly<C>
  port: (config: Readonly<C>) => number
  /** Registers the service (its app.ts plugin) on the instance. */
  register: (app: FastifyInstance, config: Readonly<C>) => Promise<void> | void
  /** Take X-Request-Id from the caller (internal services only). */
  trustRequestId: boolean
  fastify?: (config: Readonly<C>) => FastifyServerOptions
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
    childLoggerFactory: lazyRequestLogger,
    connectionTimeout: 0,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    schemaController: { compilersFactory: { buildValidator } }
  }
}

/**
 * Builds the service, listens, and closes it gracefully on SIGTERM or SIGINT: stop accepting,
 * finish in-flight requests and jobs (onClose hooks), close pools, exit 0. A second signal, or
 * the grace period running out, exits at once with code 1.
 */
export async function runService<C extends CommonServiceConfig> (opts: RunServiceOptions<C>): Promise<FastifyInstance> {
  let config: Readonly<C>
  try {
    config = opts.loadConfig()
  } catch (err) {
    // Configuration is read before any logger exists: say it plainly on stderr.
    process.stderr.write(`${opts.service}: ${(err as Error).message}\n`)
    process.exit(1)
  }
  const app = Fastify({ ...fastifyOptions(opts.service, config.LOG_LEVEL, { trustRequestId: opts.trustRequestId }), ...opts.fastify?.(config) })
  let closing = false
  const shutdown = (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting now')
      process.exit(1)
    }
    closing = true
    app.log.info({ signal }, 'shutting down')
    const timer = setTimeout(() => {
      app.log.error({ graceMs: config.SHUTDOWN_GRACE_MS }, 'graceful shutdown timed out')
      process.exit(1)
    }, config.SHUTDOWN_GRACE_MS)
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
    await opts.register(app, config)
    // A deep accept queue: thousands of clients connecting at once (streams held open for
    // minutes) overflow Node's default of 511 and get reset by the kernel.
    await app.listen({ host: config.HOST, port: opts.port(config), backlog: 4096 })
  } catch (err) {
    app.log.fatal({ err }, 'failed to start')
    await app.close().catch(() => {})
    process.exit(1)
  }
  return app
}
