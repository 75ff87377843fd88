import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { sql } from '@modelgate/db'
import type { ConsoleSession } from './console-api.js'
import type { LoadJob, LoadResult, RequestSpec } from './load-types.js'
import type { BenchOptions, Group } from './options.js'
import { Children } from './procs.js'
import { CpuSplit, listenOverflows, UsageMeter } from './procstat.js'
import type { Stack, StackResources } from './stack.js'

/** Which process answers: the mock itself, the bare relay, or the whole gateway. */
export type Via = 'direct' | 'bare' | 'gateway'

/** One measured scenario, as printed and written to latest.json. Times in ms. */
export interface ScenarioResult {
  id: string
  group: Group
  title: string
  /** The process under test. */
  via: Via | 'worker' | 'control-plane'
  /** "50 connections", "500 req/s", ... */
  load: string
  seconds: number
  /** Successful answers per second. */
  rps?: number
  p50?: number
  p99?: number
  firstByteP50?: number
  firstByteP99?: number
  /** Over the direct baseline under the same load (latency, or first byte for streams). */
  addedP50?: number
  addedP99?: number
  /** Streams: time between two SSE events as the client saw them. */
  gapP50?: number
  gapP99?: number
  /** Streams: share of events that arrived less than 1 ms after the previous one. */
  batchedShare?: number
  eventsPerStream?: number
  /** Throughput divided by a baseline's (`ratioTo`). */
  ratio?: number
  ratioTo?: string
  errors: number
  /** CPU of the process under test (mock, bare relay or gateway), percent of one core. */
  serverCpuPercent?: number
  serverPeakRssMb?: number
  workerCpuPercent?: number
  /** Usage events the billing worker settled per second while the load ran. */
  settledPerSec?: number
  /**
   * Where the machine's CPU went during the scenario, percent of one core (the machine has
   * 100 per core): the process under test, worker, load generator, mock, Postgres, Redis, rest.
   */
  cpuSplit?: Record<string, number>
  /** Usage events still queued when the load stopped. */
  queuedAtEnd?: number
  /** Seconds from the end of the load until the queue was empty. */
  drainSeconds?: number
  /**
   * Gateway scenarios: what Redis spent per answered request, from the start of the load until
   * its usage was settled (gateway and billing worker together): the server's own CPU (INFO cpu,
   * network work included), the time in scripts (INFO commandstats: a script's time includes the
   * commands it runs), and commands per request (script calls, and all commands with the
   * scripts' own, as Redis counts them).
   */
  redis?: RedisCost
  /** Gateway scenarios: the gateway's garbage-collection pauses during the load (its own metrics). */
  gc?: GcPauses
  notes?: string[]
}

/** A target of issue 7, checked against the run's figures. */
export interface TargetCheck {
  scenario: string
  target: string
  measured: string
  pass: boolean
}

/** What the scenario groups share. */
export interface Ctx {
  opts: BenchOptions
  stack: Stack
  resources: StackResources
  /** The relay user's key and session, the admin session, the seeded channel. */
  seed: Seeded
  log: (line: string) => void
  results: ScenarioResult[]
  checks: TargetCheck[]
}

export interface Seeded {
  root: ConsoleSession
  /** The relay user (all relay load is billed to it) and its unlimited token's key. */
  relay: ConsoleSession
  relayKey: string
  relayTokenId: number
  /** A second user for the billing scenario, so its balance check sees no other traffic. */
  billing: ConsoleSession
  billingTokenId: number
  /** The one channel every relay scenario starts with. */
  channelId: number
}

export const MODEL = 'gpt-4o-mini'

export function chatBody (extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello in one word.' }], max_tokens: 32, ...extra })
}

/** The same chat request against the mock, the bare relay or the gateway. */
export function chatRequest (ctx: Ctx, via: Via, body: string): RequestSpec {
  const base = via === 'direct' ? ctx.stack.mockUrl : via === 'bare' ? ctx.stack.bareUrl : ctx.stack.gatewayUrl
  return {
    url: `${base}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${via === 'gateway' ? ctx.seed.relayKey : 'sk-mock'}` },
    body
  }
}

const LOAD_WORKER = fileURLToPath(new URL('./load-worker.ts', import.meta.url))

/** What Redis spent per answered request over one scenario (see ScenarioResult.redis). */
export interface RedisCost {
  cpuUs: number
  scriptUs: number
  commands: number
  scriptCalls: number
  /** The commands that took most time, microseconds per request each (a script's commands also count in its own). */
  top: Array<{ command: string, us: number }>
}

/** Garbage-collection pauses of one process over a scenario, from prom-client's nodejs_gc_duration_seconds. */
export interface GcPauses {
  /** Pauses per second, by kind (minor = scavenge, major = mark-compact, incremental = marking steps). */
  perSecond: Record<string, number>
  /** Mean pause by kind, ms. */
  meanMs: Record<string, number>
  /** Pauses of 10 ms or more, all kinds. */
  over10ms: number
  /** Share of the scenario's time the process was paused, percent. */
  pausedPercent: number
  /**
   * Event-loop delay over the load (nodejs_eventloop_lag_p99/max_seconds; prom-client samples it
   * every 10 ms and starts afresh at each scrape), ms: how long the gateway's own thread was busy
   * (garbage collection, or any blocking work) past its timers.
   */
  loopDelayP99Ms?: number
  loopDelayMaxMs?: number
}

interface GcCounters { count: Map<string, number>, sum: Map<string, number>, over10: number, lagP99?: number, lagMax?: number }

async function gcCounters (url: string): Promise<GcCounters | undefined> {
  const text = await fetch(url).then(async (r) => await r.text()).catch(() => undefined)
  if (text === undefined) return undefined
  const out: GcCounters = { count: new Map(), sum: new Map(), over10: 0 }
  const lag = (name: string) => {
    const v = new RegExp(`^nodejs_eventloop_lag_${name}_seconds ([\\d.e+-]+)$`, 'm').exec(text)?.[1]
    return v === undefined ? undefined : Number(v) * 1000
  }
  const p99 = lag('p99')
  const max = lag('max')
  if (p99 !== undefined) out.lagP99 = p99
  if (max !== undefined) out.lagMax = max
  for (const m of text.matchAll(/^nodejs_gc_duration_seconds_(count|sum|bucket)\{([^}]*)\} ([\d.e+-]+)$/gm)) {
    const [, what, labels, value] = m
    const kind = /kind="([^"]+)"/.exec(labels!)?.[1] ?? 'other'
    if (what === 'bucket') {
      // Pauses of 10 ms or more: the count minus those in the 10 ms bucket, summed over kinds below.
      if (/le="0\.01"/.test(labels!)) out.over10 -= Number(value)
      else if (/le="\+Inf"/.test(labels!)) out.over10 += Number(value)
    } else {
      out[what as 'count' | 'sum'].set(kind, Number(value))
    }
  }
  return out
}

function gcPauses (a: GcCounters, b: GcCounters, seconds: number): GcPauses {
  const perSecond: Record<string, number> = {}
  const meanMs: Record<string, number> = {}
  let paused = 0
  for (const [kind, n] of b.count) {
    const count = n - (a.count.get(kind) ?? 0)
    const sum = (b.sum.get(kind) ?? 0) - (a.sum.get(kind) ?? 0)
    if (count <= 0) continue
    perSecond[kind] = round(count / seconds, 2)
    meanMs[kind] = round(sum * 1000 / count, 2)
    paused += sum
  }
  return {
    perSecond,
    meanMs,
    over10ms: b.over10 - a.over10,
    pausedPercent: round(paused * 100 / seconds, 2),
    // The scrape before the load started the lag histogram afresh: the one after covers the load.
    ...(b.lagP99 === undefined ? {} : { loopDelayP99Ms: round(b.lagP99, 1) }),
    ...(b.lagMax === undefined ? {} : { loopDelayMaxMs: round(b.lagMax, 1) })
  }
}

/** Redis' counters: CPU seconds of the server process, and its command statistics. */
interface RedisCounters {
  cpu: number
  scriptUsec: number
  calls: number
  scriptCalls: number
  /** Microseconds by command. */
  byCommand: Map<string, number>
}

const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall', 'fcall_ro'])

async function redisCounters (stack: Stack): Promise<RedisCounters> {
  const [cpu, commands] = await Promise.all([stack.redis.info('cpu'), stack.redis.info('commandstats')])
  const num = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0)
  const out: RedisCounters = { cpu: num('used_cpu_sys') + num('used_cpu_user'), scriptUsec: 0, calls: 0, scriptCalls: 0, byCommand: new Map() }
  for (const m of commands.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    const [, name, calls, usec] = m
    // The counters' own reads and resets are the bench's, not the product's.
    if (name === 'info' || name!.startsWith('config')) continue
    out.calls += Number(calls)
    out.byCommand.set(name!, Number(usec))
    if (SCRIPT_COMMANDS.has(name!)) {
      out.scriptCalls += Number(calls)
      out.scriptUsec += Number(usec)
    }
  }
  return out
}

function redisCost (a: RedisCounters, b: RedisCounters, requests: number): RedisCost | undefined {
  if (requests <= 0) return undefined
  return {
    cpuUs: round((b.cpu - a.cpu) * 1e6 / requests, 1),
    scriptUs: round((b.scriptUsec - a.scriptUsec) / requests, 1),
    commands: round((b.calls - a.calls) / requests, 2),
    scriptCalls: round((b.scriptCalls - a.scriptCalls) / requests, 3),
    top: [...b.byCommand].map(([command, us]) => ({ command, us: round((us - (a.byCommand.get(command) ?? 0)) / requests, 1) }))
      .sort((x, y) => y.us - x.us).slice(0, 4)
  }
}

/** CPU (percent of one core) beyond the listed processes above which a scenario is flagged as disturbed. */
const DISTURBED_REST = 40

/** Runs one job in a fresh load-generator process. */
export async function runLoad (resources: StackResources, job: LoadJob): Promise<LoadResult> {
  const child = resources.children.forkTs('load', LOAD_WORKER)
  const answer = once(child.proc, 'message') as Promise<[{ result?: LoadResult, error?: string }]>
  const exited = once(child.proc, 'exit').then(() => { throw new Error(`load generator exited without a result:\n${Children.tail(child)}`) })
  child.proc.send(job)
  const [msg] = await Promise.race([answer, exited])
  if (msg.error !== undefined || msg.result === undefined) throw new Error(`load generator failed: ${msg.error ?? 'no result'}`)
  return msg.result
}

export async function settledCount (stack: Stack): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from settlements`.execute(stack.db)
  return Number(rows[0]?.n ?? 0)
}

/** The settlements count once it reaches `want`, or when `limitMs` has passed. */
async function settledAtLeast (stack: Stack, want: number, limitMs: number): Promise<number> {
  const deadline = performance.now() + limitMs
  let n = await settledCount(stack)
  while (n < want && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    n = await settledCount(stack)
  }
  return n
}

/** Usage events not settled yet (waiting, active, delayed). */
export async function queuedEvents (stack: Stack): Promise<number> {
  const c = await stack.usageQueue.getJobCounts('wait', 'active', 'delayed', 'prioritized')
  return Object.values(c).reduce((s, n) => s + n, 0)
}

export async function failedJobs (stack: Stack): Promise<number> {
  return (await stack.usageQueue.getJobCounts('failed')).failed ?? 0
}

/** Requests the load saw answered in full. */
function answered (load: LoadResult): number {
  return load.kind === 'connections' ? load.ok : load.kind === 'rate' ? load.ok : load.completed
}

/** Waits until the usage queue is empty; returns the seconds it took (bounded by `limitS`). */
export async function drain (stack: Stack, limitS = 300): Promise<number> {
  const t0 = performance.now()
  while (await queuedEvents(stack) > 0) {
    if (performance.now() - t0 > limitS * 1000) throw new Error(`usage queue not drained after ${limitS} s`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return (performance.now() - t0) / 1000
}

function withSeconds (job: LoadJob, seconds: number): LoadJob | undefined {
  return job.kind === 'hold' ? undefined : { ...job, seconds }
}

/**
 * One scenario: a short warm-up under the same load (JIT, connection pools), the queue drained,
 * then the measured run with the process under test (and the worker) metered, then the queue
 * drained again so the next scenario starts clean.
 */
export async function measure (ctx: Ctx, s: { id: string, group: Group, title: string, via: Via, load: string, job: LoadJob }): Promise<{ result: ScenarioResult, load: LoadResult }> {
  const { stack, resources } = ctx
  const warmSeconds = Math.min(3, Math.max(1, Math.round(ctx.opts.duration / 4)))
  const warm = withSeconds(s.job, warmSeconds)
  if (warm !== undefined) await runLoad(resources, warm)
  if (s.via === 'gateway') await drain(stack)

  const serverPid = s.via === 'gateway' ? stack.gateway.pid : resources.children.pidOf(s.via === 'bare' ? 'bare-relay' : 'mock-upstream')
  const server = new UsageMeter(serverPid)
  const worker = new UsageMeter(stack.worker.pid)
  const settled0 = s.via === 'gateway' ? await settledCount(stack) : 0
  const failed0 = s.via === 'gateway' ? await failedJobs(stack) : 0
  const overflows0 = listenOverflows()
  const split = new CpuSplit({
    ...(s.via === 'direct' ? {} : { mock: [resources.children.pidOf('mock-upstream')] }),
    ...(s.via === 'gateway' ? { 'control plane': [stack.controlPlane.pid] } : {}),
    postgres: { name: 'postgres' },
    redis: { name: 'redis-server' }
  })
  const redis0 = s.via === 'gateway' ? await redisCounters(stack) : undefined
  const gc0 = s.via === 'gateway' ? await gcCounters(stack.gatewayMetricsUrl) : undefined
  split.start()
  server.start()
  worker.start()
  const t0 = performance.now()
  const load = await runLoad(resources, s.job)
  const seconds = (performance.now() - t0) / 1000
  const gc1 = gc0 === undefined ? undefined : await gcCounters(stack.gatewayMetricsUrl)
  const overflows = listenOverflows() - overflows0
  const serverUsage = server.stop()
  const workerUsage = worker.stop()
  const shares = split.stop()

  const result: ScenarioResult = {
    id: s.id,
    group: s.group,
    title: s.title,
    via: s.via,
    load: s.load,
    seconds: round(seconds, 1),
    errors: 0,
    serverCpuPercent: round(serverUsage.cpuPercent, 0),
    serverPeakRssMb: round(serverUsage.peakRssMb, 0)
  }
  if (gc0 !== undefined && gc1 !== undefined) result.gc = gcPauses(gc0, gc1, seconds)
  const loadCpu = ((load.cpuSeconds ?? 0) / seconds) * 100
  const parts: Record<string, number> = {
    [s.via]: serverUsage.cpuPercent,
    ...(s.via === 'gateway' ? { worker: workerUsage.cpuPercent } : {}),
    'load generator': loadCpu,
    ...shares
  }
  const explained = Object.entries(parts).filter(([k]) => k !== 'machine').reduce((sum, [, v]) => sum + v, 0)
  parts['rest'] = Math.max(0, (shares['machine'] ?? 0) - explained)
  result.cpuSplit = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, round(v, 0)]))
  const notes: string[] = []
  // Kernel work of the scenario's own sockets is usually 10-25% of a core; far more is someone else.
  if (parts['rest'] > DISTURBED_REST) notes.push(`disturbed: ${round(parts['rest'], 0)}% of a core went to kernel work and processes outside the bench`)
  if (s.via === 'gateway') {
    const settled = await settledCount(stack) - settled0
    result.workerCpuPercent = round(workerUsage.cpuPercent, 0)
    result.settledPerSec = round(settled / seconds, 0)
    result.queuedAtEnd = await queuedEvents(stack)
    result.drainSeconds = round(await drain(stack), 2)
    // Every answered request must end as exactly one settlement: a shortfall is lost billing.
    // The gateway holds the events of its last 50 ms before queueing them, so an empty queue
    // right after the load may still be missing those: wait (bounded) for them to settle too.
    const missing = answered(load) - (await settledAtLeast(stack, settled0 + answered(load), 5000) - settled0)
    const failed = await failedJobs(stack) - failed0
    if (redis0 !== undefined) {
      const cost = redisCost(redis0, await redisCounters(stack), answered(load))
      if (cost !== undefined) result.redis = cost
    }
    if (missing > 0) notes.push(`${missing} answered requests have no settlement after the queue drained`)
    if (failed > 0) notes.push(`${failed} usage jobs failed in the worker`)
    result.errors += Math.max(0, missing) + failed
  }
  switch (load.kind) {
    case 'connections':
      Object.assign(result, { rps: round(load.rps, 0), p50: load.latency.p50, p99: load.latency.p99 })
      result.errors += load.non2xx + load.errors
      break
    case 'rate':
      Object.assign(result, {
        rps: round(load.achievedRps, 0),
        p50: round(load.latency.p50, 3),
        p99: round(load.latency.p99, 3),
        firstByteP50: round(load.firstByte.p50, 3),
        firstByteP99: round(load.firstByte.p99, 3)
      })
      result.errors += load.failed
      if (load.gaps !== undefined) {
        Object.assign(result, {
          gapP50: round(load.gaps.p50, 3),
          gapP99: round(load.gaps.p99, 3),
          batchedShare: round(load.batchedShare ?? 0, 4),
          eventsPerStream: round(load.eventsPerStream ?? 0, 2)
        })
      }
      notes.push(...load.failures)
      break
    case 'hold':
      result.errors += load.failed
      notes.push(...load.failures)
      break
  }
  if (overflows > 0) notes.push(`${overflows} connections dropped by the kernel on this machine because an accept queue was full (TcpExt ListenOverflows)`)
  if (notes.length > 0) result.notes = notes
  ctx.results.push(result)
  ctx.log(`${s.id}: ${summary(result)}`)
  return { result, load }
}

export function summary (r: ScenarioResult): string {
  const parts: string[] = []
  if (r.rps !== undefined) parts.push(`${r.rps} req/s`)
  if (r.p50 !== undefined) parts.push(`p50 ${r.p50} ms`, `p99 ${r.p99 ?? '-'} ms`)
  if (r.firstByteP50 !== undefined) parts.push(`first byte p50 ${r.firstByteP50} ms`)
  if (r.serverPeakRssMb !== undefined) parts.push(`RSS ${r.serverPeakRssMb} MB`, `CPU ${r.serverCpuPercent ?? '-'}%`)
  if (r.errors > 0) parts.push(`${r.errors} errors`)
  return parts.join(', ')
}

/**
 * Sets `r`'s added p50 and p99: its latency (or first byte, for streams) minus `base`'s under the
 * same load.
 */
export function setAdded (r: ScenarioResult, base: ScenarioResult, of: 'latency' | 'firstByte'): asserts r is ScenarioResult & { addedP50: number, addedP99: number } {
  const [p50, p99] = of === 'latency' ? ['p50', 'p99'] as const : ['firstByteP50', 'firstByteP99'] as const
  r.addedP50 = round((r[p50] ?? 0) - (base[p50] ?? 0), 3)
  r.addedP99 = round((r[p99] ?? 0) - (base[p99] ?? 0), 3)
}

export function round (n: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(n * f) / f
}

export function check (ctx: Ctx, scenario: string, target: string, measured: string, pass: boolean): void {
  ctx.checks.push({ scenario, target, measured, pass })
  ctx.log(`target ${pass ? 'met' : 'MISSED'}: ${scenario}: ${target} (measured ${measured})`)
}
