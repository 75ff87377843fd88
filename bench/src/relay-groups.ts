// The relay scenarios of issue 7: each measures its baselines in the same run, so the ratios
// hold on a noisy machine.
import { DEFAULT_MODEL_RATIO } from '@modelgate/contracts'
import type { LoadJob } from './load-types.js'
import { chatBody, chatRequest, check, type Ctx, measure, MODEL, round, type ScenarioResult, setAdded, type Via } from './measure.js'
import { createChannels, mockChannel, untilRouted } from './seed.js'

const CONNECTIONS = 50

function closed (ctx: Ctx, via: Via, body: string): LoadJob {
  return { kind: 'connections', request: chatRequest(ctx, via, body), connections: CONNECTIONS, seconds: ctx.opts.duration }
}

/** Connections of the open-loop client: several times what the rates need at normal latency. */
const OPEN_LOOP_CONNECTIONS = 128

function rate (ctx: Ctx, via: Via, body: string, perSecond: number, stream: boolean): LoadJob {
  return { kind: 'rate', request: chatRequest(ctx, via, body), rate: perSecond, seconds: ctx.opts.duration, connections: OPEN_LOOP_CONNECTIONS, stream }
}

const pct = (ratio: number) => `${Math.round(ratio * 100)}%`

/**
 * The mock, the bare relay, the gateway and the bare relay again, at 50 connections: the gateway
 * is compared with the mean of the two bare runs around it, so a machine that speeds up or slows
 * down during the group (this one does, by up to a factor of two) skews the ratio less.
 */
async function versusBare (ctx: Ctx, s: { prefix: 'chat' | 'stream', group: 'relay' | 'stream', what: string, body: string }): Promise<{ gateway: ScenarioResult, bareMean: number, bare: [number, number], bareRuns: [ScenarioResult, ScenarioResult] }> {
  const load = `${CONNECTIONS} connections`
  const run = async (via: Via, id: string, title: string) =>
    (await measure(ctx, { id, group: s.group, title: `${s.what}, ${title}`, via, load, job: closed(ctx, via, s.body) })).result
  const d = await run('direct', `${s.prefix}-direct-50c`, 'mock called directly')
  const b1 = await run('bare', `${s.prefix}-bare-50c`, 'bare Fastify + undici relay')
  const g = await run('gateway', `${s.prefix}-gateway-50c`, 'full gateway')
  const b2 = await run('bare', `${s.prefix}-bare-50c-after`, 'bare relay again, after the gateway')
  for (const b of [b1, b2]) {
    b.ratio = round((b.rps ?? 0) / (d.rps || 1), 3)
    b.ratioTo = d.id
  }
  const bareMean = round(((b1.rps ?? 0) + (b2.rps ?? 0)) / 2, 0)
  g.ratio = round((g.rps ?? 0) / (bareMean || 1), 3)
  g.ratioTo = `mean of ${b1.id} and ${b2.id}`
  return { gateway: g, bareMean, bare: [b1.rps ?? 0, b2.rps ?? 0], bareRuns: [b1, b2] }
}

/** CPU time per request in microseconds: the process's CPU share over its throughput. */
const cpuPerRequestUs = (r: ScenarioResult): number => r.rps === undefined || r.rps === 0 || r.serverCpuPercent === undefined ? Infinity : (r.serverCpuPercent / 100) * 1e6 / r.rps

/** The gateway's CPU per request against the mean of the two bare runs' (issue 34: <= 1.3x). */
function checkCpuPerRequest (ctx: Ctx, r: { gateway: ScenarioResult, bareRuns: [ScenarioResult, ScenarioResult] }): void {
  const gw = cpuPerRequestUs(r.gateway)
  const bare = (cpuPerRequestUs(r.bareRuns[0]) + cpuPerRequestUs(r.bareRuns[1])) / 2
  const times = gw / bare
  check(ctx, r.gateway.id, 'gateway CPU per request <= 1.3x the bare relay\'s', `${round(times, 2)}x (${round(gw, 0)} vs ${round(bare, 0)} us)`, times <= 1.3 && r.gateway.errors === 0)
}

const versus = (r: { gateway: ScenarioResult, bareMean: number, bare: [number, number] }) =>
  `${pct(r.gateway.ratio ?? 0)} (${r.gateway.rps} vs ${r.bareMean} req/s; bare ${r.bare[0]} before, ${r.bare[1]} after)`

/** Non-stream chat at 50 connections: throughput against the bare relay, and gateway RSS. */
export async function relayGroup (ctx: Ctx): Promise<void> {
  const r = await versusBare(ctx, { prefix: 'chat', group: 'relay', what: 'non-stream chat', body: chatBody() })
  const g = r.gateway
  check(ctx, g.id, 'throughput >= 70% of the bare relay', versus(r), (g.ratio ?? 0) >= 0.7 && g.errors === 0)
  checkCpuPerRequest(ctx, r)
  const redis = g.redis
  check(ctx, g.id, 'Redis CPU per request <= 12 us', redis === undefined ? 'not measured' : `${redis.cpuUs} us (${redis.scriptUs} us in scripts; ${redis.commands} commands, ${redis.scriptCalls} script calls)`, redis !== undefined && redis.cpuUs <= 12)
  check(ctx, g.id, 'gateway RSS <= 120 MB under the 50-connection load', `${g.serverPeakRssMb} MB`, (g.serverPeakRssMb ?? Infinity) <= 120)
}

/** Non-stream chat, open loop at 500 req/s: latency the gateway adds over the mock. */
export async function latencyGroup (ctx: Ctx): Promise<void> {
  const body = chatBody()
  const load = '500 req/s open loop'
  const direct = await measure(ctx, { id: 'chat-direct-500rps', group: 'latency', title: 'non-stream chat, mock called directly', via: 'direct', load, job: rate(ctx, 'direct', body, 500, false) })
  // The bare relay under the same load: what any Node relay hop adds on this machine.
  const bare = await measure(ctx, { id: 'chat-bare-500rps', group: 'latency', title: 'non-stream chat, bare relay', via: 'bare', load, job: rate(ctx, 'bare', body, 500, false) })
  setAdded(bare.result, direct.result, 'latency')
  const gw = await measure(ctx, { id: 'chat-gateway-500rps', group: 'latency', title: 'non-stream chat, full gateway', via: 'gateway', load, job: rate(ctx, 'gateway', body, 500, false) })
  const g = gw.result
  setAdded(g, direct.result, 'latency')
  check(ctx, g.id, 'added latency p50 <= 1 ms', `${g.addedP50} ms`, g.addedP50 <= 1 && g.errors === 0)
  check(ctx, g.id, 'added latency p99 <= 2 ms', `${g.addedP99} ms`, g.addedP99 <= 2 && g.errors === 0)
}

/** 20-chunk streams at 50 connections: throughput against the bare relay. */
export async function streamGroup (ctx: Ctx): Promise<void> {
  const r = await versusBare(ctx, { prefix: 'stream', group: 'stream', what: '20-chunk stream', body: chatBody({ stream: true }) })
  const g = r.gateway
  check(ctx, g.id, 'throughput >= 75% of the bare relay streaming', versus(r), (g.ratio ?? 0) >= 0.75 && g.errors === 0)
  checkCpuPerRequest(ctx, r)
}

/** Pause between two chunks of the paced stream, so that batching would show. */
const PACE_MS = 5

/**
 * 20-chunk streams paced 5 ms apart, open loop at 300 req/s, read by the bench's own client: the
 * time to the first byte and the arrival of every SSE event, through the gateway and directly.
 */
export async function streamLatencyGroup (ctx: Ctx): Promise<void> {
  const body = chatBody({ stream: true, mock_chunk_delay_ms: PACE_MS })
  const load = `300 req/s open loop, chunks ${PACE_MS} ms apart`
  const direct = await measure(ctx, { id: 'stream-direct-300rps', group: 'stream-latency', title: '20-chunk paced stream, mock called directly', via: 'direct', load, job: rate(ctx, 'direct', body, 300, true) })
  const gw = await measure(ctx, { id: 'stream-gateway-300rps', group: 'stream-latency', title: '20-chunk paced stream, full gateway', via: 'gateway', load, job: rate(ctx, 'gateway', body, 300, true) })
  const d = direct.result
  const g = gw.result
  setAdded(g, d, 'firstByte')
  const lastByteAdded = round((g.p50 ?? 0) - (d.p50 ?? 0), 3)
  g.notes = [...g.notes ?? [], `last byte p50 ${lastByteAdded} ms after the direct stream's; first byte ${g.addedP50} ms`]
  check(ctx, g.id, 'first-byte overhead p50 <= 1 ms', `${g.addedP50} ms`, g.addedP50 <= 1 && g.errors === 0)
  // Not delayed: the last event trails the direct stream by no more than the first one does (+0.5 ms).
  // Not batched: no more events arrive together (< 1 ms apart) than when reading the mock directly.
  const batchedMore = round(((g.batchedShare ?? 0) - (d.batchedShare ?? 0)) * 100, 1)
  check(ctx, g.id, 'chunks not delayed: last-byte overhead p50 <= first-byte overhead + 0.5 ms',
    `${lastByteAdded} ms vs ${g.addedP50} ms`, lastByteAdded <= g.addedP50 + 0.5)
  check(ctx, g.id, 'chunks not batched: events arriving together <= direct + 2 points, same events per stream',
    `${round((g.batchedShare ?? 0) * 100, 1)}% vs ${round((d.batchedShare ?? 0) * 100, 1)}% (${batchedMore >= 0 ? '+' : ''}${batchedMore} points); ${g.eventsPerStream} vs ${d.eventsPerStream} events`,
    batchedMore <= 2 && Math.abs((g.eventsPerStream ?? 0) - (d.eventsPerStream ?? 0)) < 0.5)
}

/** Thousands of concurrent streams, one chunk a second: all must complete, gateway RSS bounded. */
export async function slowGroup (ctx: Ctx): Promise<void> {
  const count = ctx.opts.slowStreams
  const chunks = Math.min(10, Math.max(3, ctx.opts.duration - 2))
  const rampMs = Math.min(5_000, count)
  const job: LoadJob = {
    kind: 'hold',
    request: chatRequest(ctx, 'gateway', chatBody({ stream: true, mock_chunk_delay_ms: 1000, mock_chunks: chunks })),
    count,
    rampMs,
    timeoutMs: 120_000
  }
  const { result: r, load } = await measure(ctx, { id: 'slow-streams-gateway', group: 'slow', title: `${count} concurrent slow streams (${chunks} chunks, one a second)`, via: 'gateway', load: `${count} streams opened over ${rampMs / 1000} s`, job })
  if (load.kind !== 'hold') return
  r.notes = [...r.notes ?? [], `${load.completed}/${load.opened} completed, at most ${load.maxOpen} open at once, ${round(load.seconds, 1)} s`]
  check(ctx, r.id, `all ${count} streams complete`, `${load.completed}/${load.opened}`, load.completed === load.opened)
  check(ctx, r.id, 'gateway RSS <= 400 MB', `${r.serverPeakRssMb} MB`, (r.serverPeakRssMb ?? Infinity) <= 400)
}

/** Channels created per API call in the routing scenario. */
const BATCH = 1_000
const MODELS_PER_CHANNEL = 20
const PROBE_MODELS = ['gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano']

/**
 * A large routing table: the one-channel figure, then N channels x 20 models added through the
 * API (every one also serving the benchmark model, the worst case for the channel pick), the time
 * from a channel change to the gateway routing by it, and the throughput with the large table.
 */
export async function routingGroup (ctx: Ctx): Promise<void> {
  const { stack, seed, log } = ctx
  const body = chatBody()
  const load = `${CONNECTIONS} connections`
  const one = await measure(ctx, { id: 'route-1ch-gateway-50c', group: 'routing', title: 'non-stream chat, 1 channel', via: 'gateway', load, job: closed(ctx, 'gateway', body) })

  const pool = Object.keys(DEFAULT_MODEL_RATIO).filter((m) => m !== MODEL && !PROBE_MODELS.includes(m))
  const t0 = performance.now()
  let created = 0
  for (let b = 0; created < ctx.opts.channels; b++) {
    const n = Math.min(BATCH, ctx.opts.channels - created)
    const models = [MODEL, ...Array.from({ length: MODELS_PER_CHANNEL - 1 }, (_, j) => pool[(b * 7 + j) % pool.length]!)]
    const keys = Array.from({ length: n }, (_, i) => `sk-bench-${b}-${i}`)
    const ids = await createChannels(seed.root, { ...mockChannel(stack, `bench-route-${b}`, keys.join('\n'), models), mode: 'batch' })
    created += ids.length
  }
  const seedSeconds = (performance.now() - t0) / 1000
  log(`created ${created} channels x ${MODELS_PER_CHANNEL} models through the API in ${round(seedSeconds, 1)} s`)
  // Every batch announced a change; let the gateway finish those reloads before timing one.
  await new Promise((resolve) => setTimeout(resolve, 3_000))

  const rebuilds: number[] = []
  for (const model of PROBE_MODELS) {
    const c0 = performance.now()
    await createChannels(seed.root, mockChannel(stack, `bench-probe-${model}`, 'sk-probe', [model]))
    const createMs = performance.now() - c0
    const routed = await untilRouted(stack, seed.relayKey, model, 60_000)
    rebuilds.push(routed)
    log(`probe ${model}: channel created in ${round(createMs, 0)} ms, routed ${round(routed, 0)} ms after`)
  }

  const big = await measure(ctx, { id: `route-${created}ch-gateway-50c`, group: 'routing', title: `non-stream chat, ${created} channels x ${MODELS_PER_CHANNEL} models`, via: 'gateway', load, job: closed(ctx, 'gateway', body) })
  const g = big.result
  g.ratio = round((g.rps ?? 0) / (one.result.rps || 1), 3)
  g.ratioTo = one.result.id
  const worst = Math.max(...rebuilds)
  g.notes = [...g.notes ?? [], `${created} channels created in ${round(seedSeconds, 1)} s`, `change to routed: ${rebuilds.map((r) => `${round(r, 0)} ms`).join(', ')}`]
  check(ctx, g.id, 'throughput within 10% of the one-channel figure', `${pct(g.ratio)} (${g.rps} vs ${one.result.rps} req/s)`, g.ratio >= 0.9 && g.errors === 0)
  check(ctx, g.id, 'routing table rebuild < 1 s (channel created -> gateway routes by it)', `${round(worst, 0)} ms (worst of ${rebuilds.length})`, worst < 1000)
}
