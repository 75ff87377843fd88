import type { ScenarioResult, TargetCheck } from './measure.js'
import type { BenchOptions } from './options.js'

/** Where and how the figures were taken. */
export interface Machine {
  cpu: string
  cores: number
  memoryGb: number
  node: string
  postgres: string
  redis: string
  commit: string
  /** 1-minute load average when the run started and when it ended: other work skews figures. */
  loadBefore: number
  loadAfter: number
}

/** The content of latest.json. */
export interface BenchReport {
  date: string
  machine: Machine
  options: Omit<BenchOptions, 'postgresUrl' | 'redisUrl'>
  /** Full run: every group at the default sizes. Only full runs replace latest.json. */
  full: boolean
  scenarios: ScenarioResult[]
  /** Throughput ratios, "scenario / baseline" -> ratio. */
  ratios: Record<string, number>
  targets: TargetCheck[]
  /** Groups that failed to run, with the reason. */
  failures: string[]
}

const cell = (v: number | string | undefined) => (v === undefined ? '' : String(v))
const escape = (s: string) => s.replace(/\|/g, '\\|')

export function ratiosOf (scenarios: ScenarioResult[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const s of scenarios) if (s.ratio !== undefined && s.ratioTo !== undefined) out[`${s.id} / ${s.ratioTo}`] = s.ratio
  return out
}

/** The target table alone (also what docs/performance.md shows). */
export function targetTable (targets: TargetCheck[]): string {
  const lines = ['| Scenario | Target | Measured | Result |', '| --- | --- | --- | --- |']
  for (const t of targets) lines.push(`| ${t.scenario} | ${escape(t.target)} | ${escape(t.measured)} | ${t.pass ? 'met' : '**missed**'} |`)
  return lines.join('\n')
}

export function machineLine (r: BenchReport): string {
  const m = r.machine
  return `${m.cpu} (${m.cores} cores, ${m.memoryGb} GB), Node ${m.node}, ${m.postgres}, Redis ${m.redis}, commit ${m.commit}; ` +
    `services at LOG_LEVEL ${r.options.logLevel ?? 'warn'}; ${r.options.duration} s per scenario after a warm-up; load average ${m.loadBefore} before the run, ${m.loadAfter} after`
}

export function markdown (r: BenchReport): string {
  const met = r.targets.filter((t) => t.pass).length
  const out: string[] = []
  out.push(`# Benchmark results, ${r.date}`, '')
  out.push(`\`npm run bench\` on ${machineLine(r)}. Everything on 127.0.0.1 and on the same two cores: the load generator, the mock upstream, the services, Postgres and Redis.`, '')
  if (!r.full) out.push('**Partial run** (not every group, or not the default sizes): figures are not comparable with a full run.', '')
  out.push('## Targets (issue 7)', '', targetTable(r.targets), '', `${met} of ${r.targets.length} targets met.`, '')
  if (r.failures.length > 0) out.push('Groups that failed to run:', '', ...r.failures.map((f) => `- ${escape(f)}`), '')
  out.push('## Scenarios', '')
  out.push('| Scenario | Process | Load | req/s | p50 ms | p99 ms | first byte p50 / p99 ms | added p50 / p99 ms | ratio | CPU % | peak RSS MB | worker CPU % | settled/s | queued at end | drain s | errors |')
  out.push('| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const s of r.scenarios) {
    const pair = (a?: number, b?: number) => (a === undefined ? '' : `${a} / ${cell(b)}`)
    out.push(`| ${s.id} | ${s.via} | ${escape(s.load)} | ${cell(s.rps)} | ${cell(s.p50)} | ${cell(s.p99)} | ${pair(s.firstByteP50, s.firstByteP99)} | ${pair(s.addedP50, s.addedP99)} | ` +
      `${s.ratio === undefined ? '' : `${s.ratio} of ${s.ratioTo ?? ''}`} | ${cell(s.serverCpuPercent)} | ${cell(s.serverPeakRssMb)} | ${cell(s.workerCpuPercent)} | ` +
      `${cell(s.settledPerSec)} | ${cell(s.queuedAtEnd)} | ${cell(s.drainSeconds)} | ${s.errors} |`)
  }
  out.push('')
  const streams = r.scenarios.filter((s) => s.gapP50 !== undefined)
  if (streams.length > 0) {
    out.push('Stream timing as the client saw it:', '')
    out.push('| Scenario | gap between events p50 / p99 ms | events arriving together | events per stream |', '| --- | ---: | ---: | ---: |')
    for (const s of streams) out.push(`| ${s.id} | ${s.gapP50} / ${cell(s.gapP99)} | ${Math.round((s.batchedShare ?? 0) * 1000) / 10}% | ${cell(s.eventsPerStream)} |`)
    out.push('')
  }
  const split = r.scenarios.filter((s) => s.cpuSplit !== undefined && s.group !== 'slow')
  if (split.length > 0) {
    const cols = ['direct', 'bare', 'gateway', 'worker', 'load generator', 'mock', 'control plane', 'postgres', 'redis', 'rest', 'machine']
    out.push(`Where the CPU went (percent of one core; the machine has ${r.machine.cores} cores, so ${r.machine.cores * 100} in all; rest = kernel work and processes not listed):`, '')
    out.push(`| Scenario | ${cols.join(' | ')} |`, `| --- |${cols.map(() => ' ---: |').join('')}`)
    for (const s of split) out.push(`| ${s.id} | ${cols.map((c) => cell(s.cpuSplit?.[c])).join(' | ')} |`)
    out.push('')
  }
  const redis = r.scenarios.filter((s) => s.redis !== undefined)
  if (redis.length > 0) {
    out.push('What Redis spent per answered request, from the start of the load until its usage was settled (gateway and worker together):', '')
    out.push('| Scenario | Redis CPU us | in scripts us | commands | script calls | most time (us per request) |', '| --- | ---: | ---: | ---: | ---: | --- |')
    for (const s of redis) out.push(`| ${s.id} | ${s.redis!.cpuUs} | ${s.redis!.scriptUs} | ${s.redis!.commands} | ${s.redis!.scriptCalls} | ${(s.redis!.top ?? []).map((c) => `${c.command} ${c.us}`).join(', ')} |`)
    out.push('')
  }
  const gc = r.scenarios.filter((s) => s.gc !== undefined)
  if (gc.length > 0) {
    const kinds = (g: Record<string, number>) => Object.entries(g).map(([k, v]) => `${k} ${v}`).join(', ')
    out.push('The gateway\'s garbage-collection pauses and event-loop delay during the load (its own metrics: nodejs_gc_duration_seconds, nodejs_eventloop_lag_*):', '')
    out.push('| Scenario | GC pauses per second | mean pause ms | pauses >= 10 ms | time paused | event-loop delay p99 / max ms |', '| --- | --- | --- | ---: | ---: | ---: |')
    for (const s of gc) out.push(`| ${s.id} | ${kinds(s.gc!.perSecond)} | ${kinds(s.gc!.meanMs)} | ${s.gc!.over10ms} | ${s.gc!.pausedPercent}% | ${cell(s.gc!.loopDelayP99Ms)} / ${cell(s.gc!.loopDelayMaxMs)} |`)
    out.push('')
  }
  const noted = r.scenarios.filter((s) => (s.notes ?? []).length > 0)
  if (noted.length > 0) {
    out.push('Notes:', '')
    for (const s of noted) for (const n of s.notes ?? []) out.push(`- ${s.id}: ${escape(n)}`)
    out.push('')
  }
  out.push('## How the figures are taken', '')
  out.push(
    '- Each scenario runs a warm-up under the same load, waits for the usage queue to drain, then measures. The load generator is its own process, forked per scenario.',
    '- "50 connections": autocannon, fixed concurrency; its latencies have 1 ms resolution. "req/s open loop": the bench\'s own undici client (at most 128 keep-alive connections) sends on a fixed schedule whatever the answers do and times each request from the moment it was due (microsecond resolution), so a request waiting for a free connection counts; for streams it timestamps every SSE event.',
    '- direct = the mock upstream called without a relay; bare = a few dozen lines of Fastify + undici forwarding the same request (the practical limit of a Node relay here); gateway = the full path: key lookup, routing, price, Redis reservation, upstream call, usage event on BullMQ, settled by the running billing worker.',
    '- added = gateway minus direct under the same load (latency, or first byte for streams). ratio = throughput over the named baseline.',
    '- CPU % and peak RSS are those of the process under test, from /proc (peak = VmHWM, reset at the start of the scenario, and 100 ms VmRSS samples). settled/s = usage events the worker wrote to Postgres during the load; queued at end / drain s = the backlog when the load stopped and how long the worker took to clear it.',
    '- The paced stream scenario has the mock pause 5 ms between chunks, so that batching by a relay would show as events arriving together (< 1 ms apart).',
    '- Routing: channels are added through the console API in batches (`mode: batch`), all serving the benchmark model (the widest possible pick) plus 19 others; the rebuild time is from the API answering a new channel to the first relay request routed by it (polled every 5 ms).',
    '- Billing: valid usage events for one user are queued as the gateway queues them (batch jobs, here 100 events each) while the queue is paused, then released; the rate is events / time until the settlements table holds them all, and the user\'s and token\'s balances are compared to the unit.',
    '- Redis per request: the server\'s CPU (INFO cpu: its main thread and network work), the time in scripts (INFO commandstats; a script\'s time includes the commands it runs, which Redis also counts on their own) and the commands (script calls alone, and all commands with the scripts\' own), from the start of the load until the worker settled it, over the requests answered.',
    '- Every gateway scenario also checks that each answered request ends as one settlement once the queue drains, and that no usage job failed; shortfalls count as errors.',
    '- Logs: rows bulk-inserted with generate_series across the existing monthly partitions, then `vacuum analyze`; the pages are the console API\'s own (`GET /api/log/self/`, `GET /api/log/?model_name=`: one page plus the total count).',
    ''
  )
  return out.join('\n')
}
