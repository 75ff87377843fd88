import { Histogram, type Metric, Registry } from 'prom-client'
import t from 'tap'
import { DURATION_BUCKETS, FastHistogram } from '../src/metrics.js'

// The request path's histogram must scrape exactly as prom-client's own does for the same
// observations: same series, cumulative buckets, +Inf, sum and count, label order and escaping.
t.test('FastHistogram scrapes byte for byte like prom-client\'s Histogram', async (t) => {
  const theirs = new Registry()
  const ours = new Registry()
  const reference = new Histogram({ name: 'h_seconds', help: 'help text', labelNames: ['route', 'status'], buckets: DURATION_BUCKETS, registers: [theirs] })
  const fast = new FastHistogram('h_seconds', 'help text', ['route', 'status'], DURATION_BUCKETS)
  ours.registerMetric(fast as unknown as Metric)
  const values = [0, 0.005, 0.0051, 0.3, 1, 299.9, 300, 301, 1e9, 0.02]
  const labels = [{ route: '/v1/chat/completions', status: 200 }, { route: '/x "quoted" \\ back\nslash', status: 404 }, { route: '(unmatched)', status: 200 }]
  for (const [i, v] of values.entries()) {
    const l = labels[i % labels.length]!
    reference.observe(l, v)
    fast.observe(l, v)
  }
  t.equal(await ours.metrics(), await theirs.metrics())
  fast.observe({ route: '/a', status: 200 }, Number.NaN)
  t.equal(await ours.metrics(), await theirs.metrics(), 'a non-finite value is dropped')
  fast.reset()
  reference.reset()
  t.equal(await ours.metrics(), await theirs.metrics(), 'reset empties it')
})

t.test('an unlabelled FastHistogram', async (t) => {
  const theirs = new Registry()
  const ours = new Registry()
  const reference = new Histogram({ name: 'lag_seconds', help: 'lag', buckets: [1, 5, 10], registers: [theirs] })
  const fast = new FastHistogram('lag_seconds', 'lag', [], [10, 1, 5])
  ours.registerMetric(fast as unknown as Metric)
  for (const v of [0.5, 1, 4, 11, 7]) {
    reference.observe(v)
    fast.observe(v)
  }
  t.equal(await ours.metrics(), await theirs.metrics())
})
