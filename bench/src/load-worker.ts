// The load generator, run in its own process so it does not share an event loop with the
// processes it measures. run.ts forks it per scenario, sends one LoadJob, gets one LoadResult.
import autocannon from 'autocannon'
import { Pool } from 'undici'
import {
  type ClosedLoopJob,
  type ClosedLoopResult,
  type HoldJob,
  type HoldResult,
  type LoadJob,
  type LoadResult,
  type OpenLoopJob,
  type OpenLoopResult,
  percentiles
} from './load-types.js'

/** Whether a stream's last bytes are its normal end: OpenAI's `[DONE]` or Anthropic's `message_stop`. */
const streamEnded = (tail: string) => tail.includes('[DONE]') || tail.includes('"type":"message_stop"')

async function closedLoop (job: ClosedLoopJob): Promise<ClosedLoopResult> {
  const r = await autocannon({
    url: job.request.url,
    method: 'POST',
    headers: job.request.headers,
    body: job.request.body,
    connections: job.connections,
    duration: job.seconds,
    timeout: 30
  })
  const l = r.latency
  return {
    kind: 'connections',
    rps: r['2xx'] / r.duration,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    latency: { p50: l.p50, p90: l.p90, p99: l.p99, max: l.max, mean: l.average }
  }
}

/** Failure reasons with how often each occurred. */
class Failures {
  count = 0
  readonly #reasons = new Map<string, number>()

  add (why: string): void {
    this.count++
    this.#reasons.set(why, (this.#reasons.get(why) ?? 0) + 1)
  }

  top (): string[] {
    return [...this.#reasons].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([why, n]) => `${n} x ${why}`)
  }
}

/** Counts the SSE events (blank-line terminated) in a stream of chunks, with their arrival times. */
class EventClock {
  times: number[] = []
  #lastWasNewline = false

  push (text: string, at: number): void {
    for (let i = 0; i < text.length; i++) {
      const nl = text.charCodeAt(i) === 10
      if (nl && this.#lastWasNewline) {
        this.times.push(at)
        this.#lastWasNewline = false
      } else {
        this.#lastWasNewline = nl
      }
    }
  }
}

const GRACE_MS = 30_000

async function openLoop (job: OpenLoopJob): Promise<OpenLoopResult> {
  const url = new URL(job.request.url)
  // A bounded pool, as a client library or a load balancer keeps: enough for the rate at normal
  // latency, and no storm of new connections when the server stalls (a request waiting for a
  // connection still counts from its due time).
  const pool = new Pool(url.origin, { connections: job.connections, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 })
  const latency: number[] = []
  const firstByte: number[] = []
  const gaps: number[] = []
  let events = 0
  let ok = 0
  const failures = new Failures()
  const fail = (why: string) => { failures.add(why) }

  // Answers still missing this long after the last send count as failed, so the run stays bounded.
  const giveUp = new AbortController()
  const one = async (start: number) => {
    try {
      const res = await pool.request({ path: url.pathname, method: 'POST', headers: job.request.headers, body: job.request.body, signal: giveUp.signal })
      let first = 0
      const clock = new EventClock()
      let tail = ''
      for await (const chunk of res.body) {
        const at = performance.now()
        if (first === 0) first = at
        const text = (chunk as Buffer).toString('utf8')
        if (job.stream) {
          clock.push(text, at)
          tail = (tail + text).slice(-64)
        }
      }
      const end = performance.now()
      if (res.statusCode !== 200) return fail(`HTTP ${res.statusCode}`)
      if (job.stream && !streamEnded(tail)) return fail('stream ended without [DONE] or message_stop')
      ok++
      latency.push(end - start)
      firstByte.push((first || end) - start)
      if (job.stream) {
        events += clock.times.length
        for (let i = 1; i < clock.times.length; i++) gaps.push(clock.times[i]! - clock.times[i - 1]!)
      }
    } catch (err) {
      fail((err as Error).message)
    }
  }

  const total = Math.round(job.rate * job.seconds)
  const intervalMs = 1000 / job.rate
  const inFlight = new Set<Promise<void>>()
  const t0 = performance.now()
  let sent = 0
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - t0) / intervalMs) + 1)
      while (sent < due) {
        const p = one(t0 + sent * intervalMs).finally(() => inFlight.delete(p))
        sent++
        inFlight.add(p)
      }
      if (sent >= total) resolve()
      else setTimeout(tick, Math.max(0, Math.min(1, t0 + sent * intervalMs - performance.now())))
    }
    tick()
  })
  const timer = setTimeout(() => giveUp.abort(new Error(`no answer within ${GRACE_MS / 1000} s after the last send`)), GRACE_MS)
  await Promise.all(inFlight)
  clearTimeout(timer)
  const seconds = (performance.now() - t0) / 1000
  await pool.destroy()
  return {
    kind: 'rate',
    sent,
    ok,
    failed: failures.count,
    failures: failures.top(),
    achievedRps: ok / seconds,
    latency: percentiles(latency),
    firstByte: percentiles(firstByte),
    ...(job.stream
      ? {
          gaps: percentiles(gaps),
          batchedShare: gaps.length === 0 ? 0 : gaps.filter((g) => g < 1).length / gaps.length,
          eventsPerStream: ok === 0 ? 0 : events / ok
        }
      : {})
  }
}

async function hold (job: HoldJob): Promise<HoldResult> {
  const url = new URL(job.request.url)
  const pool = new Pool(url.origin, { connections: job.count + 16, pipelining: 1, headersTimeout: job.timeoutMs, bodyTimeout: job.timeoutMs })
  let open = 0
  let maxOpen = 0
  let completed = 0
  const failures = new Failures()
  const t0 = performance.now()
  const one = async () => {
    open++
    maxOpen = Math.max(maxOpen, open)
    try {
      const res = await pool.request({ path: url.pathname, method: 'POST', headers: job.request.headers, body: job.request.body })
      let tail = ''
      for await (const chunk of res.body) tail = (tail + (chunk as Buffer).toString('utf8')).slice(-64)
      if (res.statusCode === 200 && streamEnded(tail)) completed++
      else throw new Error(res.statusCode === 200 ? 'stream ended without [DONE] or message_stop' : `HTTP ${res.statusCode}: ${tail}`)
    } catch (err) {
      failures.add((err as Error).message)
    } finally {
      open--
    }
  }
  const all: Array<Promise<void>> = []
  for (let i = 0; i < job.count; i++) {
    const due = t0 + (job.rampMs * i) / job.count
    const wait = due - performance.now()
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
    all.push(one())
  }
  await Promise.all(all)
  await pool.close()
  return { kind: 'hold', opened: job.count, completed, failed: failures.count, failures: failures.top(), maxOpen, seconds: (performance.now() - t0) / 1000 }
}

async function run (job: LoadJob): Promise<LoadResult> {
  switch (job.kind) {
    case 'connections': return await closedLoop(job)
    case 'rate': return await openLoop(job)
    case 'hold': return await hold(job)
  }
}

process.once('message', (job: LoadJob) => {
  const cpu0 = process.cpuUsage()
  run(job).then(
    (result) => {
      const cpu = process.cpuUsage(cpu0)
      const report: LoadResult = { ...result, cpuSeconds: (cpu.user + cpu.system) / 1e6 }
      process.send?.({ result: report }, () => process.exit(0))
    },
    (err: unknown) => process.send?.({ error: (err as Error).stack ?? String(err) }, () => process.exit(1))
  )
})
process.on('disconnect', () => process.exit(0))
