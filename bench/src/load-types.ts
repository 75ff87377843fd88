/** One HTTP request the load repeats. */
export interface RequestSpec {
  /** Full URL, e.g. http://127.0.0.1:3000/v1/chat/completions. */
  url: string
  headers: Record<string, string>
  body: string
}

/** Fixed concurrency: `connections` keep one request each in flight (autocannon). */
export interface ClosedLoopJob {
  kind: 'connections'
  request: RequestSpec
  connections: number
  seconds: number
}

/**
 * Open loop: one request every 1/rate s whatever the answers do; latency counts from the moment
 * a request was due, so a stalled server cannot hide its queue (no coordinated omission).
 */
export interface OpenLoopJob {
  kind: 'rate'
  request: RequestSpec
  rate: number
  seconds: number
  /** Most connections the client opens. */
  connections: number
  /** Read the answer as SSE and time each event. */
  stream: boolean
}

/** `count` streams opened over `rampMs` and held until they end. */
export interface HoldJob {
  kind: 'hold'
  request: RequestSpec
  count: number
  rampMs: number
  timeoutMs: number
}

export type LoadJob = ClosedLoopJob | OpenLoopJob | HoldJob

/** Percentiles in milliseconds. */
export interface Percentiles { p50: number, p90: number, p99: number, max: number, mean: number }

export interface ClosedLoopResult {
  kind: 'connections'
  /** 2xx answers per second over the run. */
  rps: number
  ok: number
  non2xx: number
  errors: number
  timeouts: number
  /** autocannon's latency (1 ms resolution). */
  latency: Percentiles
}

export interface OpenLoopResult {
  kind: 'rate'
  sent: number
  ok: number
  failed: number
  /** The most frequent failure reasons, with counts. */
  failures: string[]
  /** Answers completed per second, until the last one arrived. */
  achievedRps: number
  /** From due time to the last byte. */
  latency: Percentiles
  /** From due time to the first body byte. */
  firstByte: Percentiles
  /** Streams: gaps between two SSE events of one answer, as the client saw them. */
  gaps?: Percentiles
  /** Streams: share of gaps under 1 ms, i.e. events that arrived together (batched). */
  batchedShare?: number
  /** Streams: SSE events per answer, mean. */
  eventsPerStream?: number
}

export interface HoldResult {
  kind: 'hold'
  opened: number
  completed: number
  failed: number
  failures: string[]
  /** Most streams open at once. */
  maxOpen: number
  seconds: number
}

/** One job's result, with the CPU seconds the load generator spent on it. */
export type LoadResult = (ClosedLoopResult | OpenLoopResult | HoldResult) & { cpuSeconds?: number }

/** Percentiles of raw samples (ms). */
export function percentiles (samples: number[]): Percentiles {
  if (samples.length === 0) return { p50: 0, p90: 0, p99: 0, max: 0, mean: 0 }
  const s = Float64Array.from(samples).sort()
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!
  let sum = 0
  for (const v of s) sum += v
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: s[s.length - 1]!, mean: sum / s.length }
}
