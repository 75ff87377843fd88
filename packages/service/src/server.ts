import { randomUUID } from 'node:crypto'
import { loggerOptions } from '@modelgate/logger'
import { openAIClientErrorHandler } from './client-errors.js'
import { httpMetricsPlugin, type MetricsServer, startMetricsServer } from './metrics.js'
import { lazyRequestLogger } from './request-logger.js'
import { startTracing, stopTracing } from './tracing.js'
import { listenWhileStarting, migrateDatabase, type StartingServer } from './startup.js'
import { buildSerializer, buildValidator } from './validation.js'
import type { Server } from 'node:http'
import Fastify, { type FastifyHttpOptions, type FastifyInstance, type FastifyServerOptions } from 'fastify'

/** The configuration fields every service has. */
export interface CommonServiceConfig {
  LOG_LEVEL: string
  HOST: string
  SHUTDOWN_GRACE_MS: number
  /** Port of the separate /metrics listener (bound to HOST); 0 or absent = none. */
  METRICS_PORT?: number
  /** OTLP/HTTP collector URL; empty or absent = tracing off. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string
  OTEL_SERVICE_NAME?: string
  DATABASE_URL: string
  /** A direct connection for migrations (the advisory lock needs a session); DATABASE_URL when unset. */
  MIGRATE_DATABASE_URL?: string | undefined
  MIGRATE_ON_START: boolean
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
  /** Body (the service's error shape) of the 503 other routes get while migrations run. */
  unavailable?: () => unknown
}

/** How long a client has to send a whole request, head and body (Node's requestTimeout). */
export const REQUEST_TIMEOUT_MS = 60_000
/** How long a client has to send a request's head (Node's headersTimeout, at most the above). */
export const HEADERS_TIMEOUT_MS = 30_000

/** Options of {@link fastifyOptions}. */
export interface FastifyOptionsExtra {
  trustRequestId: boolean
  /**
   * Node's requestTimeout (receiving the whole request; 0 turns it off), {@link REQUEST_TIMEOUT_MS}
   * by default. Tests shorten it; headersTimeout and the checking interval follow it.
   */
  requestTimeoutMs?: number
}

/**
 * Fastify options every service shares: redacting logger, request ids, sane timeouts.
 * The public edge (the gateway) mints its own request ids, since they later key billing; internal
 * services take the gateway's from X-Request-Id so one id follows a request across services.
 *
 * Timeouts: a client must send its head within headersTimeout and its whole request within
 * requestTimeout (slowloris, a body at 1 byte per 10 s); Node checks both every
 * connectionsCheckingInterval and answers 408. They cover receiving the request only: once it
 * is in, a response may stream for as long as it needs (SSE). The gateway answers what Node
 * refuses before routing (431 headers too large, 408, 400) in OpenAI's error shape.
 */
export function fastifyOptions (service: string, logLevel: string, opts: FastifyOptionsExtra): FastifyHttpOptions<Server> {
  const requestTimeout = opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS
  const headersTimeout = requestTimeout > 0 ? Math.min(HEADERS_TIMEOUT_MS, requestTimeout) : HEADERS_TIMEOUT_MS
  return {
    logger: loggerOptions({ service, level: logLevel }),
    requestIdHeader: opts.trustRequestId ? 'x-request-id' : false,
    genReqId: () => randomUUID(),
    childLoggerFactory: lazyRequestLogger,
    // Fastify's two lines per request ("incoming request", "request completed") only at debug and
    // trace: at info they cost a third of the gateway's throughput (measured: 4,658 against about
    // 6,000 req/s), and every relay request already leaves its usage event, log row and metrics.
    disableRequestLogging: logLevel !== 'debug' && logLevel !== 'trace',
    connectionTimeout: 0,
    keepAliveTimeout: 72_000,
    requestTimeout,
    http: {
      requestTimeout,
      headersTimeout,
      // Node's default (30 s) would let a timed-out client linger up to 30 s past its deadline.
      connectionsCheckingInterval: Math.max(100, Math.min(5_000, Math.floor(headersTimeout / 4)))
    },
    ...(service === 'gateway' ? { clientErrorHandler: openAIClientErrorHandler } : {}),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    schemaController: { compilersFactory: { buildValidator, buildSerializer } }
  }
}

/**
 * Listens, applies migrations when MIGRATE_ON_START (meanwhile /healthz answers 200, /readyz 503
 * `migrating`, other routes 503), builds the service, serves it on the same port, and closes it
 * gracefully on SIGTERM or SIGINT: stop accepting,
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
  await startTracing(opts.service, config)
  const app = Fastify({ ...fastifyOptions(opts.service, config.LOG_LEVEL, { trustRequestId: opts.trustRequestId }), ...opts.fastify?.(config) })
  let metrics: MetricsServer | undefined
  app.addHook('onClose', async () => { await metrics?.close() })
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
    app.close().then(stopTracing).then(() => {
      app.log.info('stopped')
      process.exit(0)
    }, (err: unknown) => {
      app.log.error({ err }, 'error while shutting down')
      process.exit(1)
    })
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))

  // A deep accept queue: thousands of clients connecting at once (streams held open for
  // minutes) overflow Node's default of 511 and get reset by the kernel.
  const listenOptions = { host: config.HOST, port: opts.port(config), backlog: 4096 }
  let starting: StartingServer | undefined
  try {
    if (config.MIGRATE_ON_START) {
      // Listen, then migrate: a migration may take minutes (a large logs table), and an
      // orchestrator must see a live process (/healthz 200) that is not ready (/readyz 503
      // `migrating`) meanwhile, not a closed port it kills. The service's routes are built
      // only once the schema is current, then take the port over.
      starting = await listenWhileStarting({ ...listenOptions, unavailable: opts.unavailable })
      await migrateDatabase(config.MIGRATE_DATABASE_URL ?? config.DATABASE_URL, `${opts.service}-migrate`, app.log)
    }
    await app.register(httpMetricsPlugin)
    // Migrated above (or not asked to): the service's own plugins need not.
    await opts.register(app, { ...config, MIGRATE_ON_START: false })
    // Metrics on a listener of their own (METRICS_PORT), never on the service's public port.
    if ((config.METRICS_PORT ?? 0) > 0) {
      metrics = await startMetricsServer(config.HOST, config.METRICS_PORT!)
      app.log.info({ port: metrics.port }, 'metrics listening')
    }
    await app.ready()
    await starting?.close()
    await app.listen(listenOptions)
  } catch (err) {
    app.log.fatal({ err }, 'failed to start')
    await starting?.close().catch(() => {})
    await app.close().catch(() => {})
    process.exit(1)
  }
  return app
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  // Postgres: connection exceptions, shutting down, too many connections.
  '08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03', '53300'
])
const UNAVAILABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Stream isn't writeable|Command timed out|Reached the max retries per request limit|Connection is closed/

/**
 * True when `err` says Postgres or Redis could not be reached (not that a query was wrong): the
 * caller answers 503, retryable, without the driver's text (REL-37).
 */
export function isStoreUnavailable (err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true
    if (e.name === 'MaxRetriesPerRequestError' || UNAVAILABLE_MESSAGES.test(e.message)) return true
    if (e instanceof AggregateError && e.errors.some((x) => isStoreUnavailable(x))) return true
  }
  return false
}
