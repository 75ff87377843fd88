import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { poolFigures } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, type Metric, Registry } from 'prom-client'

/**
 * The process's one metrics registry: Node's default metrics (event loop lag, GC, heap, CPU,
 * file descriptors) plus every metric the services define through {@link counter},
 * {@link gauge} and {@link histogram}. Served by {@link startMetricsServer}, never on a public port.
 */
export const metricsRegistry = new Registry()
collectDefaultMetrics({ register: metricsRegistry })

/** Buckets (seconds) of request and call durations: 5 ms to 5 minutes (streams last minutes). */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]

/**
 * The metric already registered under `name`, else the one `make` creates: services that count the
 * same thing (channels auto-disabled by the relay and by channel tests) share it, also when
 * several run in one process (the end-to-end tests).
 */
function registered<M> (name: string, make: () => M): M {
  return (metricsRegistry.getSingleMetric(name) as M | undefined) ?? make()
}

/** A counter in {@link metricsRegistry}. Label values must come from small fixed sets. */
export function counter<L extends string = never> (name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  return registered(name, () => new Counter<L>({ name, help, labelNames, registers: [metricsRegistry] }))
}

/** A gauge in {@link metricsRegistry}; `collect` (optional) sets it when scraped. */
export function gauge<L extends string = never> (name: string, help: string, labelNames: readonly L[] = [], collect?: (this: Gauge<L>) => void | Promise<void>): Gauge<L> {
  return registered(name, () => new Gauge<L>({ name, help, labelNames, registers: [metricsRegistry], ...(collect === undefined ? {} : { collect }) }))
}

/** A histogram in {@link metricsRegistry}, {@link DURATION_BUCKETS} unless told. */
export function histogram<L extends string = never> (name: string, help: string, labelNames: readonly L[] = [], buckets: number[] = DURATION_BUCKETS): FastHistogram<L> {
  return registered(name, () => {
    const h = new FastHistogram<L>(name, help, labelNames, buckets)
    metricsRegistry.registerMetric(h as unknown as Metric)
    return h
  })
}

/** One scraped value as prom-client's registry formats it. */
interface ScrapedValue {
  labels: Record<string, string | number>
  sharedLabels: Record<string, string | number>
  value: number
  metricName: string
}

/** One labelled series of a {@link FastHistogram}: counts per bucket (not cumulative), sum and count. */
interface Series {
  labels: Record<string, string | number>
  counts: number[]
  sum: number
  count: number
}

/**
 * A Prometheus histogram for the request path. prom-client's own checks, hashes and copies its
 * labels on every observation (measured: about 2% of the gateway's CPU at saturation with four
 * observations a request); here an observation is one string key, a map lookup and three
 * additions, and the text format is built only when scraped. Label values must come from small
 * fixed sets (never user input); the label names are checked by the type.
 */
export class FastHistogram<L extends string = never> {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly name: string
  readonly help: string
  readonly #labelNames: readonly L[]
  readonly #bounds: readonly number[]
  #series = new Map<string, Series>()

  constructor (name: string, help: string, labelNames: readonly L[], buckets: readonly number[]) {
    this.name = name
    this.help = help
    this.#labelNames = labelNames
    this.#bounds = [...buckets].sort((a, b) => a - b)
  }

  /** Records `value` (a non-finite value is dropped) under `labels`, or unlabelled. */
  observe (labels: Record<L, string | number>, value: number): void
  observe (value: number): void
  observe (labelsOrValue: Record<L, string | number> | number, maybeValue?: number): void {
    const labels = typeof labelsOrValue === 'number' ? undefined : labelsOrValue
    const value = typeof labelsOrValue === 'number' ? labelsOrValue : maybeValue!
    if (!Number.isFinite(value)) return
    let key = ''
    if (labels !== undefined) for (const name of this.#labelNames) key += `${labels[name]}\u0001`
    let series = this.#series.get(key)
    if (series === undefined) {
      const own: Record<string, string | number> = {}
      if (labels !== undefined) for (const name of this.#labelNames) own[name] = labels[name]
      series = { labels: own, counts: new Array<number>(this.#bounds.length).fill(0), sum: 0, count: 0 }
      this.#series.set(key, series)
    }
    const bounds = this.#bounds
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    if (i < bounds.length) series.counts[i]!++
    series.sum += value
    series.count++
  }

  /**
   * prom-client's metric shape, which the registry formats: cumulative buckets, +Inf, sum and
   * count, the series' labels given as shared labels (after `le`, as prom-client writes them).
   */
  async get (): Promise<{ name: string, help: string, type: string, aggregator: string, values: ScrapedValue[] }> {
    const values: ScrapedValue[] = []
    for (const s of this.#series.values()) {
      let acc = 0
      for (let i = 0; i < this.#bounds.length; i++) {
        acc += s.counts[i]!
        values.push({ labels: { le: this.#bounds[i]! }, sharedLabels: s.labels, value: acc, metricName: `${this.name}_bucket` })
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_bucket` })
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` })
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }

  reset (): void {
    this.#series.clear()
  }
}

/** Channels auto-disabled, counted where it happens: the gateway's relay and the worker's channel tests. */
export const channelsAutoDisabled = counter('modelgate_channels_auto_disabled_total',
  'Channels disabled automatically (status 3), by source: relay (a request\'s upstream condemned the channel) or channel_test (the worker\'s periodic test)',
  ['source'])

/** `200` -> `'2xx'`: a status class label (bounded). */
export function statusClass (status: number): string {
  return STATUS_CLASSES[Math.trunc(status / 100)] ?? 'other'
}
const STATUS_CLASSES = ['other', '1xx', '2xx', '3xx', '4xx', '5xx']

const httpDuration = histogram('modelgate_http_request_duration_seconds',
  'HTTP requests by method, route pattern (never the raw URL) and status code: time from routing to the end of the response',
  ['method', 'route', 'status'])
const UNMATCHED = '(unmatched)'

/**
 * Records every request of the instance in `modelgate_http_request_duration_seconds`, labelled by
 * method, route pattern (`/v1beta/models/*`, not the URL the client sent; requests no route
 * matched share one label) and status. One hook at the end of the response; the duration is
 * Fastify's own (reply.elapsedTime), so nothing is timed twice.
 */
export const httpMetricsPlugin = fp(async (app: FastifyInstance) => {
  app.addHook('onResponse', (req, reply, done) => {
    httpDuration.observe({ method: req.method, route: req.routeOptions.url ?? UNMATCHED, status: reply.statusCode }, reply.elapsedTime / 1000)
    done()
  })
}, { name: 'http-metrics', fastify: '5.x' })

// Pool and Redis figures are read when scraped, from the instances the db and redis plugins made.
const dbs = new Set<object>()
const redises = new Set<{ status: string }>()

gauge('modelgate_db_pool_connections', 'Postgres pool: connections open (total), idle, and queries waiting for a connection; max is the pool size',
  ['state'], function () {
    let total = 0; let idle = 0; let waiting = 0; let max = 0
    for (const db of dbs) {
      const f = poolFigures(db)
      if (f === undefined) continue
      total += f.total; idle += f.idle; waiting += f.waiting; max += f.max
    }
    this.set({ state: 'total' }, total)
    this.set({ state: 'idle' }, idle)
    this.set({ state: 'waiting' }, waiting)
    this.set({ state: 'max' }, max)
  })
gauge('modelgate_redis_up', 'Redis connection of the service: 1 when every client is connected and ready, 0 otherwise', [], function () {
  let up = redises.size > 0 ? 1 : 0
  for (const r of redises) if (r.status !== 'ready') up = 0
  this.set(up)
})

/** Reports `db`'s pool in `modelgate_db_pool_connections` until the returned function is called. */
export function trackPool (db: object): () => void {
  dbs.add(db)
  return () => { dbs.delete(db) }
}

/** Reports `redis`'s connection in `modelgate_redis_up` until the returned function is called. */
export function trackRedis (redis: { status: string }): () => void {
  redises.add(redis)
  return () => { redises.delete(redis) }
}

/** The metrics listener of a service. */
export interface MetricsServer {
  server: Server
  port: number
  close: () => Promise<void>
}

/**
 * Serves {@link metricsRegistry} as `GET /metrics` (Prometheus text format) on its own listener:
 * `port` on `host`, a port of its own so the public one never shows them. Anything else is 404.
 */
export async function startMetricsServer (host: string, port: number): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n')
      return
    }
    metricsRegistry.metrics().then((text) => {
      res.writeHead(200, { 'content-type': metricsRegistry.contentType }).end(req.method === 'HEAD' ? undefined : text)
    }, (err: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics failed: ${(err as Error).message}\n`)
    })
  })
  server.keepAliveTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host, port }, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => { resolve() }))
    }
  }
}
