import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { createDb, migrateToLatest } from '@modelgate/db'
import { SecretBox, tokenKeyHash } from '@modelgate/service'
import { createServiceEnv, freePort, TEST_SECRETS, until } from '@modelgate/testing'
import t, { type Test } from 'tap'
import { parse as parseYaml } from 'yaml'
import { fakeOpenAI } from '../src/upstream.js'

const require = createRequire(import.meta.url)
const repo = new URL('../../', import.meta.url)

/** Polls `check` until it holds or `ms` pass. */
/** The samples of a Prometheus text exposition: name, labels, value. */
interface Sample { name: string, labels: Record<string, string>, value: number }
function samples (text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null) continue
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!
    out.push({ name: m[1]!, labels, value: Number(m[3]) })
  }
  return out
}

/** The sum of the samples named `name` whose labels include `labels`. */
function value (text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0)
}

/** Every metric name a scrape defines (# TYPE lines), with a histogram's _bucket, _sum and _count series. */
function metricNames (text: string): Set<string> {
  const names = new Set<string>()
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(m[1]!)
    if (m[2] === 'histogram' || m[2] === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${m[1]!}${suffix}`)
  }
  return names
}

/** The metric names a PromQL expression reads: its selectors (`name{`, `name[`) and every modelgate_/nodejs_/process_ identifier. */
function exprMetrics (expr: string): string[] {
  const noStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')
  const names = new Set<string>()
  for (const m of noStrings.matchAll(/\b((?:modelgate|nodejs|process)_[a-zA-Z0-9_:]*)/g)) names.add(m[1]!)
  for (const m of noStrings.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{[]/g)) names.add(m[1]!)
  return [...names]
}

interface Span { traceId: string, spanId: string, parentSpanId: string, name: string, service: string, attributes: Record<string, unknown> }

/** OTLP ids arrive as hex strings in the JSON encoding (base64 tolerated). */
function hexId (id: unknown): string {
  if (typeof id !== 'string' || id === '') return ''
  return /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex')
}

/** A real OTLP/HTTP receiver: the JSON the exporter sends to /v1/traces, decoded into spans. */
async function otlpCollector (t: Test): Promise<{ url: string, spans: Span[], contentTypes: string[] }> {
  const state = { url: '', spans: [] as Span[], contentTypes: [] as string[] }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') { res.writeHead(404).end(); return }
      state.contentTypes.push(String(req.headers['content-type']))
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ resource?: { attributes?: Array<{ key: string, value: { stringValue?: string } }> }, scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }>
      }
      for (const rs of body.resourceSpans) {
        const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? ''
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            const attributes: Record<string, unknown> = {}
            for (const a of (s['attributes'] as Array<{ key: string, value: Record<string, unknown> }> | undefined) ?? []) attributes[a.key] = Object.values(a.value)[0]
            state.spans.push({ traceId: hexId(s['traceId']), spanId: hexId(s['spanId']), parentSpanId: hexId(s['parentSpanId']), name: String(s['name']), service, attributes })
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve() }) }))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return state
}

/** Starts a service's built server (dist/server.js) as its own process; stopped at teardown. */
function startService (t: Test, name: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [require.resolve(`@modelgate/${name}/server`)], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (c: Buffer) => { stderr = (stderr + c.toString()).slice(-4000) })
  child.once('exit', (code) => { if (code !== 0 && code !== null) t.comment(`${name} exited ${code}: ${stderr}`) })
  t.teardown(async () => {
    if (child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))])
    child.kill('SIGKILL')
  })
  return child
}

t.test('metrics and traces of the running services', async (t) => {
  const base = await createServiceEnv(t)
  const box = new SecretBox(TEST_SECRETS.CRYPTO_SECRET)
  const db = createDb(base.DATABASE_URL!)
  t.teardown(async () => { await db.destroy() })
  await migrateToLatest(db)
  const upstream = await fakeOpenAI(t)
  const collector = await otlpCollector(t)

  const user = await db.insertInto('users').values({
    username: `u${randomBytes(3).toString('hex')}`, quota: 10_000_000, role: 1, group: 'default', access_token_hash: null, aff_code: null, concurrency_limit: 0, deleted_at: null, setting: {}
  }).returningAll().executeTakeFirstOrThrow()
  const token = async (remain: number) => {
    const key = `sk-${randomBytes(24).toString('hex')}`
    await db.insertInto('tokens').values({
      user_id: user.id, name: 'metrics', key_hash: tokenKeyHash(key), key_encrypted: box.seal(key), remain_quota: remain, unlimited_quota: false, status: 1, expired_time: -1,
      model_limits_enabled: false, model_limits: '', allow_ips: '', group: '', rpm_limit: 0, tpm_limit: 0, concurrency_limit: 0, deleted_at: null
    }).execute()
    return key
  }
  const rich = await token(10_000_000)
  const poor = await token(1)
  const channel = await db.insertInto('channels').values({
    type: 1, name: 'metrics upstream', key: box.seal('sk-upstream-secret'), base_url: upstream.url, models: 'gpt-4o-mini', group: 'default', priority: 0, weight: 0, auto_ban: 1,
    model_mapping: '', status_code_mapping: '', openai_organization: null, proxy_url: '', tag: null, max_input_tokens: 0, multi_key_mode: 'random', param_override: '', header_override: '', other_info: {}
  }).returningAll().executeTakeFirstOrThrow()
  await db.insertInto('abilities').values({ group: 'default', model: 'gpt-4o-mini', channel_id: channel.id, priority: 0, weight: 0, tag: null }).execute()

  const [gwPort, cpPort, wkPort, gwMetrics, cpMetrics, wkMetrics] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()])
  const common = { ...base, HOST: '127.0.0.1', LOG_LEVEL: 'warn', MIGRATE_ON_START: 'false', CONTROL_PLANE_PORT: String(cpPort), CONTROL_PLANE_URL: `http://127.0.0.1:${cpPort}` }
  const controlPlane = startService(t, 'control-plane', { ...common, METRICS_PORT: String(cpMetrics) })
  startService(t, 'gateway', { ...common, PORT: String(gwPort), METRICS_PORT: String(gwMetrics), OTEL_EXPORTER_OTLP_ENDPOINT: collector.url })
  startService(t, 'billing-worker', { ...common, BILLING_WORKER_PORT: String(wkPort), METRICS_PORT: String(wkMetrics), OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'worker-under-test' })
  const gateway = `http://127.0.0.1:${gwPort}`
  const ready = async (url: string) => (await fetch(url)).status === 200
  t.ok(await until(async () => await ready(`${gateway}/readyz`) && await ready(`http://127.0.0.1:${cpPort}/readyz`) && await ready(`http://127.0.0.1:${wkPort}/readyz`), 90_000), 'the three services are ready')

  const scrape = async (port: number) => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`)
    if (res.status !== 200) throw new Error(`metrics answered ${res.status}`)
    if (!/^text\/plain; version=0\.0\.4/.test(res.headers.get('content-type') ?? '')) throw new Error('not the Prometheus text format')
    return await res.text()
  }
  const chat = async (key: string) => await fetch(`${gateway}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
  })

  await t.test('the public gateway port does not serve metrics', async (t) => {
    for (const path of ['/metrics', '/metrics/', '/metrics?x=1']) {
      const res = await fetch(`${gateway}${path}`)
      t.equal(res.status, 404, `${path} is 404`)
      t.notMatch(await res.text(), /modelgate_|<html/i, `${path} shows neither metrics nor the console`)
    }
    t.equal((await fetch(`http://127.0.0.1:${gwMetrics}/other`)).status, 404, 'the metrics listener serves /metrics only')
  })

  await t.test('a relay request moves the relay, reservation, upstream and HTTP figures', async (t) => {
    const before = await scrape(gwMetrics)
    const relayed = { endpoint: 'chat', status_class: '2xx', stream: 'no' }
    const res = await chat(rich)
    t.equal(res.status, 200)
    await res.text()
    const after = await scrape(gwMetrics)
    t.equal(value(after, 'modelgate_relay_duration_seconds_count', relayed) - value(before, 'modelgate_relay_duration_seconds_count', relayed), 1, 'relay histogram count +1')
    t.equal(value(after, 'modelgate_relay_first_byte_seconds_count', { endpoint: 'chat' }) - value(before, 'modelgate_relay_first_byte_seconds_count', { endpoint: 'chat' }), 1, 'first byte histogram +1')
    t.equal(value(after, 'modelgate_reservations_admitted_total') - value(before, 'modelgate_reservations_admitted_total'), 1, 'one reservation admitted')
    t.equal(value(after, 'modelgate_upstream_duration_seconds_count', { channel: String(channel.id) }) - value(before, 'modelgate_upstream_duration_seconds_count', { channel: String(channel.id) }), 1, 'one upstream call on the channel')
    const route = { method: 'POST', route: '/v1/chat/completions', status: '200' }
    t.equal(value(after, 'modelgate_http_request_duration_seconds_count', route) - value(before, 'modelgate_http_request_duration_seconds_count', route), 1, 'HTTP histogram by route pattern')
    t.notOk(samples(after).some((s) => s.name.startsWith('modelgate_http_') && (s.labels['route'] ?? '').includes('?')), 'no raw URL as a route label')
    t.ok(value(after, 'modelgate_db_pool_connections', { state: 'max' }) > 0, 'pool size reported')
    t.equal(value(after, 'modelgate_redis_up'), 1, 'redis up')
    t.ok(samples(after).some((s) => s.name === 'nodejs_eventloop_lag_p99_seconds'), 'default metrics: event loop lag')
    t.ok(await until(async () => value(await scrape(gwMetrics), 'modelgate_usage_events_published_total') - value(before, 'modelgate_usage_events_published_total') === 1, 30_000), 'its usage event published')
  })

  await t.test('a refused reservation counts its reason', async (t) => {
    const before = await scrape(gwMetrics)
    const res = await chat(poor)
    t.equal(res.status, 403)
    await res.text()
    const after = await scrape(gwMetrics)
    t.equal(value(after, 'modelgate_reservations_refused_total', { reason: 'token_quota' }) - value(before, 'modelgate_reservations_refused_total', { reason: 'token_quota' }), 1, 'refused: token_quota +1')
    t.equal(value(after, 'modelgate_reservations_admitted_total') - value(before, 'modelgate_reservations_admitted_total'), 0, 'nothing admitted')
    const refused = { endpoint: 'chat', status_class: '4xx', stream: 'no' }
    t.equal(value(after, 'modelgate_relay_duration_seconds_count', refused) - value(before, 'modelgate_relay_duration_seconds_count', refused), 1, 'the refusal is a 4xx relay')
  })

  await t.test('settlement moves the worker\'s settled counter and lag histogram', async (t) => {
    const before = await scrape(wkMetrics)
    t.ok(samples(before).some((s) => s.name === 'modelgate_usage_queue_jobs' && s.labels['state'] === 'waiting'), 'queue depth by state')
    const res = await chat(rich)
    t.equal(res.status, 200)
    await res.text()
    t.ok(await until(async () => {
      const now = await scrape(wkMetrics)
      return value(now, 'modelgate_usage_events_settled_total') > value(before, 'modelgate_usage_events_settled_total') &&
        value(now, 'modelgate_settlement_lag_seconds_count') > value(before, 'modelgate_settlement_lag_seconds_count')
    }, 30_000), 'settled counter and lag histogram moved')
    const after = await scrape(wkMetrics)
    t.ok(value(after, 'modelgate_settlement_batch_duration_seconds_count') > 0, 'settlement transactions timed')
    t.equal(value(after, 'modelgate_usage_events_failed_total'), 0, 'no failed event')
    t.equal(value(after, 'modelgate_usage_queue_jobs', { state: 'failed' }), 0, 'failed set empty')
  })

  await t.test('a relay request and its settlement share one trace', async (t) => {
    t.ok(await until(async () => collector.spans.some((s) => s.name === 'usage.settle'), 30_000), 'the worker exported a settlement span')
    t.ok(collector.contentTypes.every((c) => c.startsWith('application/json')), 'OTLP/HTTP JSON')
    const relays = collector.spans.filter((s) => s.name === 'relay' && s.attributes['modelgate.outcome'] === 'success')
    t.ok(relays.length >= 1, 'relay spans of answered requests')
    const settle = collector.spans.find((s) => s.name === 'usage.settle' && relays.some((r) => r.traceId === s.traceId))
    t.ok(settle, 'a settlement span continues a relay request\'s trace')
    const relay = relays.find((r) => r.traceId === settle?.traceId)!
    t.equal(settle?.parentSpanId, relay.spanId, 'its parent is the relay span')
    t.equal(relay.service, 'gateway', 'the gateway\'s spans carry its service name')
    t.equal(settle?.service, 'worker-under-test', 'OTEL_SERVICE_NAME names the worker\'s')
    t.same({ endpoint: relay.attributes['modelgate.endpoint'], model: relay.attributes['modelgate.model'], channel: Number(relay.attributes['modelgate.channel_id']), status: Number(relay.attributes['http.response.status_code']) },
      { endpoint: 'chat', model: 'gpt-4o-mini', channel: channel.id, status: 200 }, 'relay span attributes')
    const children = collector.spans.filter((s) => s.parentSpanId === relay.spanId && s.service === 'gateway').map((s) => s.name).sort()
    t.same(children, ['quota.reserve', 'upstream'], 'reservation and upstream call are its children')
    // Spans leave in batches: the refused request's may come after the settlement's on a loaded machine.
    t.ok(await until(async () => collector.spans.some((s) => s.name === 'relay' && s.attributes['modelgate.outcome'] === 'refused' && s.attributes['http.response.status_code'] === 403), 30_000), 'the refused request\'s span')
    t.ok(collector.spans.every((s) => s.service !== 'control-plane'), 'the control plane (no endpoint set) sends nothing')
  })

  await t.test('the control plane has HTTP and pool metrics', async (t) => {
    await (await fetch(`http://127.0.0.1:${cpPort}/api/status`)).text()
    const text = await scrape(cpMetrics)
    t.ok(value(text, 'modelgate_http_request_duration_seconds_count', { route: '/api/status' }) >= 1, '/api/status recorded by route')
    t.ok(value(text, 'modelgate_db_pool_connections', { state: 'total' }) >= 1, 'pool figures')
  })

  await t.test('every metric the dashboard and the alert rules read exists', async (t) => {
    const names = new Set<string>()
    for (const port of [gwMetrics, cpMetrics, wkMetrics]) for (const n of metricNames(await scrape(port))) names.add(n)
    const dashboard = JSON.parse(readFileSync(new URL('deploy/grafana/modelgate-dashboard.json', repo), 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }> }
    const alerts = parseYaml(readFileSync(new URL('deploy/prometheus/alerts.yml', repo), 'utf8')) as { groups: Array<{ rules: Array<{ alert: string, expr: string }> }> }
    const exprs = [
      ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((x) => ({ where: 'dashboard', expr: x.expr }))),
      ...alerts.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })))
    ]
    t.ok(exprs.length > 25, `${exprs.length} expressions`)
    const missing = exprs.flatMap(({ where, expr }) => exprMetrics(expr).filter((m) => !names.has(m)).map((m) => `${where}: ${m}`))
    t.same(missing, [], 'no expression reads a metric that no service exposes')
    t.ok(exprMetrics('sum by (le) (rate(modelgate_x_bucket{a="b"}[5m])) + rate(foo[1m])').includes('foo'), 'the parser finds selectors')
  })

  await t.test('a service that shuts down closes its metrics listener', async (t) => {
    const exited = new Promise<number | null>((resolve) => controlPlane.once('exit', resolve))
    controlPlane.kill('SIGTERM')
    t.equal(await exited, 0, 'the control plane exits 0 on SIGTERM')
    const answer = await fetch(`http://127.0.0.1:${cpMetrics}/metrics`).then((r) => r.status, (err: Error) => (err.cause as { code?: string } | undefined)?.code)
    t.equal(answer, 'ECONNREFUSED', 'nothing listens on its metrics port')
  })
})
