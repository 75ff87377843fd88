import { metricsRegistry, tracing } from '@modelgate/service'
import t from 'tap'
import { buildGateway, fakeOpenAI, reload, seedChannel, seedToken, seedUser } from './fixtures.js'

t.test('with tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT) a relay request makes no span; its metrics are counted', async (t) => {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  await reload(app)

  t.equal(tracing.enabled, false, 'tracing is off by default')
  // Every span the code could make goes through tracing.tracer: count what reaches it.
  let started = 0
  const original = tracing.tracer
  tracing.tracer = new Proxy(original, {
    get (target, prop, receiver) {
      if (prop === 'startSpan' || prop === 'startActiveSpan') started++
      return Reflect.get(target, prop, receiver) as unknown
    }
  })
  t.teardown(() => { tracing.tracer = original })

  const answered = async () => [...(await metricsRegistry.getSingleMetricAsString('modelgate_relay_duration_seconds')).matchAll(/_count\{[^}]*status_class="2xx"[^}]*\} (\d+)/g)]
    .reduce((n, m) => n + Number(m[1]), 0)
  const before = await answered()
  for (const stream of [false, true]) {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'hi' }] })
    })
    t.equal(res.status, 200)
    await res.text()
  }
  t.equal(started, 0, 'no span started')
  await app.usagePublisher.drain()
  const events = await app.usagePublisher.queue.getJobs(['waiting', 'delayed', 'prioritized'])
  t.ok(events.length > 0 && events.every((j) => (j.data as { events: Array<Record<string, unknown>> }).events.every((e) => !('traceparent' in e))), 'usage events carry no traceparent')
  t.equal(await answered() - before, 2, 'both requests in the relay histogram')
})
