// The scenarios of the data path: the billing worker draining a backlog, and the console's log
// queries over a large logs table.
import { USAGE_BATCH_JOB, type UsageBatch, type UsageEvent } from '@modelgate/contracts'
import { countLogs, findLogs, type LogFilter, sql } from '@modelgate/db'
import { ConsoleSession } from './console-api.js'
import { check, type Ctx, failedJobs, MODEL, round, type ScenarioResult, settledCount } from './measure.js'
import { CpuSplit, UsageMeter } from './procstat.js'

/** The gateway's job options (services/gateway/src/relay/usage.ts), so the worker sees real jobs. */
const JOB_OPTS = { attempts: Number.MAX_SAFE_INTEGER, backoff: { type: 'capped' }, removeOnComplete: 1000, removeOnFail: false }
/**
 * Events per job. The gateway sends the events of a 2 ms window as one job (up to 200): a few
 * per job at moderate load, ~100 near its throughput limit.
 */
const EVENTS_PER_JOB = 100
const JOBS_PER_ADD = 20

/**
 * N valid usage events for one user and token, queued as the gateway queues them (batch jobs)
 * while the queue is paused, then released at once: the worker's settlement rate into Postgres,
 * and the balances checked to the unit.
 */
export async function billingGroup (ctx: Ctx): Promise<void> {
  const { stack, seed, log } = ctx
  const n = ctx.opts.billingEvents
  const userId = seed.billing.userId
  const tokenId = seed.billingTokenId
  const userRow = () => stack.db.selectFrom('users').select(['quota', 'used_quota', 'request_count']).where('id', '=', userId).executeTakeFirstOrThrow()
  const tokenRow = () => stack.db.selectFrom('tokens').select(['used_quota']).where('id', '=', tokenId).executeTakeFirstOrThrow()
  const userBefore = await userRow()
  const tokenBefore = await tokenRow()
  const stamp = Date.now()
  const createdAt = Math.floor(stamp / 1000)

  const failed0 = await failedJobs(stack)
  await stack.usageQueue.pause()
  let sum = 0
  const e0 = performance.now()
  let jobs: Array<{ name: string, data: UsageBatch, opts: typeof JOB_OPTS & { jobId: string } }> = []
  for (let first = 0; first < n; first += EVENTS_PER_JOB) {
    const events: UsageEvent[] = []
    for (let j = first; j < Math.min(n, first + EVENTS_PER_JOB); j++) {
      const quota = 1 + ((j * 7919) % 1000)
      sum += quota
      events.push({
        request_id: `bench-billing-${stamp}-${j}`,
        created_at: createdAt,
        user_id: userId,
        username: 'benchbill',
        token_id: tokenId,
        token_name: 'benchbill',
        unlimited_token: true,
        channel_id: seed.channelId,
        model_name: MODEL,
        upstream_model: MODEL,
        group: 'default',
        is_stream: false,
        ip: '127.0.0.1',
        use_time_ms: 120,
        first_response_ms: 120,
        prompt_tokens: 9,
        completion_tokens: 20,
        cached_tokens: 0,
        reserved: quota + 500,
        quota,
        outcome: 'success',
        usage_source: 'upstream',
        price: { model_ratio: 0.075, completion_ratio: 4, group_ratio: 1 },
        retried_channels: []
      })
    }
    jobs.push({ name: USAGE_BATCH_JOB, data: { events }, opts: { ...JOB_OPTS, jobId: `${events[0]!.request_id}+${events.length}` } })
    if (jobs.length === JOBS_PER_ADD || first + EVENTS_PER_JOB >= n) {
      await stack.usageQueue.addBulk(jobs)
      jobs = []
    }
  }
  log(`queued ${n} usage events (${Math.ceil(n / EVENTS_PER_JOB)} jobs of ${EVENTS_PER_JOB}) in ${round((performance.now() - e0) / 1000, 1)} s; releasing the queue`)

  const settled0 = await settledCount(stack)
  const meter = new UsageMeter(stack.worker.pid)
  const split = new CpuSplit({ postgres: { name: 'postgres' }, redis: { name: 'redis-server' } })
  split.start()
  meter.start()
  const t0 = performance.now()
  await stack.usageQueue.resume()
  const limitMs = Math.max(120_000, n * 5)
  for (;;) {
    const settled = await settledCount(stack) - settled0
    if (settled >= n) break
    if (performance.now() - t0 > limitMs) throw new Error(`only ${settled}/${n} events settled after ${limitMs / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  const seconds = (performance.now() - t0) / 1000
  const usage = meter.stop()
  const shares = split.stop()
  const failed = await failedJobs(stack) - failed0

  const userAfter = await userRow()
  const tokenAfter = await tokenRow()
  const { rows } = await sql<{ n: string }>`select count(*) as n from logs where user_id = ${userId} and request_id like ${`bench-billing-${stamp}-%`}`.execute(stack.db)
  const logRows = Number(rows[0]?.n ?? 0)
  const exact = {
    quota: userAfter.quota === userBefore.quota - sum,
    usedQuota: userAfter.used_quota === userBefore.used_quota + sum,
    requestCount: userAfter.request_count === userBefore.request_count + n,
    tokenUsed: tokenAfter.used_quota === tokenBefore.used_quota + sum,
    logRows: logRows === n
  }
  const r: ScenarioResult = {
    id: 'billing-worker-backlog',
    group: 'billing',
    title: `billing worker, ${n} queued events`,
    via: 'worker',
    load: `${n} events in jobs of ${EVENTS_PER_JOB}, released at once`,
    seconds: round(seconds, 1),
    errors: failed,
    settledPerSec: round(n / seconds, 0),
    drainSeconds: round(seconds, 2),
    serverCpuPercent: round(usage.cpuPercent, 0),
    serverPeakRssMb: round(usage.peakRssMb, 0),
    workerCpuPercent: round(usage.cpuPercent, 0),
    cpuSplit: { worker: round(usage.cpuPercent, 0), postgres: round(shares['postgres'] ?? 0, 0), redis: round(shares['redis'] ?? 0, 0), machine: round(shares['machine'] ?? 0, 0) },
    notes: [
      // What one core of each settles: the figures a fleet is sized by (docs/performance.md).
      `per core: worker ${perCore(n / seconds, usage.cpuPercent)} events/s, Postgres ${perCore(n / seconds, shares['postgres'] ?? 0)} events/s, Redis ${perCore(n / seconds, shares['redis'] ?? 0)} events/s (one user's events)`,
      `users.quota ${userBefore.quota} -> ${userAfter.quota} (expected ${userBefore.quota - sum}); used_quota +${userAfter.used_quota - userBefore.used_quota}; request_count +${userAfter.request_count - userBefore.request_count}; token used +${tokenAfter.used_quota - tokenBefore.used_quota}; ${logRows} log rows`
    ]
  }
  ctx.results.push(r)
  log(`billing: ${n} events settled in ${r.seconds} s (${r.settledPerSec}/s), worker CPU ${r.workerCpuPercent}%`)
  check(ctx, r.id, '>= 5,000 events/s settled into Postgres', `${r.settledPerSec}/s`, (r.settledPerSec ?? 0) >= 5000 && failed === 0)
  const wrong = Object.entries(exact).filter(([, ok]) => !ok).map(([k]) => k)
  check(ctx, r.id, 'balances exact afterwards (user quota, used quota, request count, token, one log row each)', wrong.length === 0 ? 'exact' : `wrong: ${wrong.join(', ')}`, wrong.length === 0)
}

/** Events a second one core of a process settles, from its CPU share (percent of one core). */
const perCore = (rate: number, cpuPercent: number): number => cpuPercent <= 0 ? 0 : Math.round(rate / (cpuPercent / 100))

const DAY = 86_400
const INSERT_CHUNK = 1_000_000
const LOG_MODELS = 20
const RUNS = 7
const LOG_USER_PASSWORD = 'bench-password-2026'

/** Median and worst of `RUNS` timed calls after one warm-up. */
async function timed (fn: () => Promise<unknown>): Promise<{ median: number, max: number }> {
  await fn()
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    await fn()
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return { median: times[Math.floor(times.length / 2)]!, max: times[times.length - 1]! }
}

async function logPage (session: ConsoleSession, path: string, query: Record<string, string | number>): Promise<number> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))
  const data = await session.call<{ total: number, items: unknown[] }>('GET', `${path}?${qs.toString()}`)
  if (data.items.length === 0) throw new Error(`${path} found no rows; the seeding missed the range`)
  return data.total
}

/**
 * N log rows spread from the start of last month to now (the partitions that exist), 10% of
 * them the relay user's (a heavy user, who also has the relay scenarios' own rows), 0.1% a new
 * user's (a typical one), 20 models. Then the console's own queries, through the API and
 * straight through @modelgate/db.
 */
export async function logsGroup (ctx: Ctx): Promise<void> {
  const { stack, seed, log } = ctx
  const n = ctx.opts.logRows
  const now = Math.floor(Date.now() / 1000)
  const d = new Date()
  const lo = Math.floor(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1) / 1000)
  const hi = now - 60
  const models = [MODEL, 'gpt-4o', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'gpt-4-turbo', 'gpt-3.5-turbo', 'o1', 'o1-mini', 'o3',
    'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'text-embedding-3-small', 'text-embedding-3-large', 'whisper-1', 'tts-1', 'claude-3-5-haiku-20241022']
  const heavy = seed.relay.userId
  const created = await seed.root.call<{ id: number }>('POST', '/api/user/', { username: 'benchlog', password: LOG_USER_PASSWORD })
  const typicalSession = await ConsoleSession.login(seed.root.base, 'benchlog', LOG_USER_PASSWORD)
  const typical = created.id

  const t0 = performance.now()
  for (let from = 1; from <= n; from += INSERT_CHUNK) {
    const to = Math.min(n, from + INSERT_CHUNK - 1)
    await sql`
      insert into logs (created_at, type, user_id, username, token_id, token_name, model_name, channel_id, "group",
                        quota, prompt_tokens, completion_tokens, use_time, is_stream, ip, request_id, content, other)
      select ${lo}::bigint + ((g - 1) * (${hi - lo}::bigint)) / ${n}::bigint, 2, u.id, 'user' || u.id, 1 + g % 50, 'token-' || (g % 50),
             (${sql.val(models)}::text[])[1 + g % ${LOG_MODELS}], 1 + g % 100, 'default',
             100 + g % 900, 10 + g % 500, 20 + g % 300, 1 + g % 5, g % 2 = 0, '127.0.0.1', null, '',
             '{"model_ratio":0.075,"completion_ratio":4,"group_ratio":1}'::jsonb
      from generate_series(${from}::bigint, ${to}::bigint) as g,
           lateral (select case when g % 10 = 0 then ${heavy}::int when g % 1000 = 1 then ${typical}::int else 1000 + (g % 997)::int end as id) as u
    `.execute(stack.db)
    log(`logs: ${to}/${n} rows inserted (${round((performance.now() - t0) / 1000, 0)} s)`)
  }
  // Autovacuum would have done this on a live system; without it counts read every heap page.
  await sql`vacuum analyze logs`.execute(stack.db)
  const seedSeconds = (performance.now() - t0) / 1000
  log(`logs: ${n} rows inserted and vacuumed in ${round(seedSeconds, 0)} s`)

  const ownRange = { start_timestamp: now - 7 * DAY, end_timestamp: now + 1 }
  const adminRange = { start_timestamp: now - 30 * DAY, end_timestamp: now + 1 }
  const page = { p: 1, page_size: 10 }
  const ownHeavy = await timed(async () => await logPage(seed.relay, '/api/log/self/', { ...page, ...ownRange }))
  const ownTypical = await timed(async () => await logPage(typicalSession, '/api/log/self/', { ...page, ...ownRange }))
  const adminModel = await timed(async () => await logPage(seed.root, '/api/log/', { ...page, ...adminRange, model_name: MODEL }))
  const heavyTotal = await logPage(seed.relay, '/api/log/self/', { ...page, ...ownRange })
  const typicalTotal = await logPage(typicalSession, '/api/log/self/', { ...page, ...ownRange })
  const modelTotal = await logPage(seed.root, '/api/log/', { ...page, ...adminRange, model_name: MODEL })

  // The same two statements each page runs, timed apart, to tell the page from the total.
  const split = async (f: LogFilter) => ({
    find: await timed(async () => await findLogs(stack.db, f, { offset: 0, limit: 10 })),
    count: await timed(async () => await countLogs(stack.db, f))
  })
  const heavySplit = await split({ userId: heavy, start: ownRange.start_timestamp, end: ownRange.end_timestamp })
  const modelSplit = await split({ modelName: MODEL, start: adminRange.start_timestamp, end: adminRange.end_timestamp })

  const ms = (t: { median: number, max: number }) => `${round(t.median, 1)} ms (worst ${round(t.max, 1)})`
  const r: ScenarioResult = {
    id: 'logs-queries',
    group: 'logs',
    title: `logs table with ${n} rows (plus the run's own)`,
    via: 'control-plane',
    load: `one request at a time, median of ${RUNS}`,
    seconds: round(seedSeconds, 0),
    errors: 0,
    p50: round(ownHeavy.median, 1),
    notes: [
      `own-log page, heavy user (${heavyTotal} rows in 7 days): ${ms(ownHeavy)}; findLogs ${ms(heavySplit.find)}, countLogs ${ms(heavySplit.count)}`,
      `own-log page, typical user (${typicalTotal} rows in 7 days): ${ms(ownTypical)}`,
      `admin filter by model (${modelTotal} rows in 30 days): ${ms(adminModel)}; findLogs ${ms(modelSplit.find)}, countLogs ${ms(modelSplit.count)}`,
      `${n} rows inserted with generate_series and vacuumed in ${round(seedSeconds, 0)} s`
    ]
  }
  ctx.results.push(r)
  for (const line of r.notes ?? []) log(`logs: ${line}`)
  check(ctx, r.id, 'own-log page (user + 7-day range, page and total) < 50 ms', `heavy user ${round(ownHeavy.median, 1)} ms, typical ${round(ownTypical.median, 1)} ms`, ownHeavy.median < 50 && ownTypical.median < 50)
  check(ctx, r.id, 'admin filter by model (30-day range, page and total) < 200 ms', `${round(adminModel.median, 1)} ms`, adminModel.median < 200)
}
