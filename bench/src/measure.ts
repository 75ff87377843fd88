import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { sql } from '@modelgate/db'
import type { ConsoleSession } from './console-api.js'
import type { LoadJob, LoadResult, RequestSpec } from './load-types.js'
import type { BenchOptions, Group } from './options.js'
import { Children } from './procs.js'
import { CpuSplit, listenOverflows, pidsNamed, UsageMeter } from './procstat.js'
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
    postgres: pidsNamed('postgres'),
    redis: pidsNamed('redis-server')
  })
  split.start()
  server.start()
  worker.start()
  const t0 = performance.now()
  const load = await runLoad(resources, s.job)
  const seconds = (performance.now() - t0) / 1000
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

export function round (n: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(n * f) / f
}

export function check (ctx: Ctx, scenario: string, target: string, measured: string, pass: boolean): void {
  ctx.checks.push({ scenario, target, measured, pass })
  ctx.log(`target ${pass ? 'met' : 'MISSED'}: ${scenario}: ${target} (measured ${measured})`)
}
