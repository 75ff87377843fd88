import t from 'tap'
import { bucketStart, modelsOf, seriesOf, timeline, totalsOf, type UsageBucket } from './series.ts'

const H = 3600
const D = 86_400

t.test('bucket starts match the server: hours, UTC days, weeks from Monday', async (t) => {
  const monday = Date.UTC(2026, 0, 5) / 1000 // 2026-01-05 was a Monday
  t.equal(bucketStart(monday + 5 * H + 17, 'hour'), monday + 5 * H)
  t.equal(bucketStart(monday + D + 5 * H, 'day'), monday + D)
  t.equal(bucketStart(monday + 6 * D + 23 * H, 'week'), monday)
  t.equal(bucketStart(monday + 7 * D, 'week'), monday + 7 * D)
})

t.test('the timeline fills quiet buckets with zeros and sums per model', async (t) => {
  const start = Date.UTC(2026, 0, 5) / 1000
  const buckets: UsageBucket[] = [
    { created_at: start + H, model_name: 'a', count: 2, quota: 10, token_used: 5 },
    { created_at: start + 3 * H, model_name: 'b', count: 1, quota: 30, token_used: 7 }
  ]
  const times = timeline(buckets, 'hour', start, start + 4 * H)
  t.same(times, [0, 1, 2, 3].map((i) => start + i * H))
  const models = modelsOf(buckets)
  t.same(models, ['b', 'a'], 'largest quota first')
  t.same(seriesOf(buckets, times, models, (b) => b.count), [{ model: 'b', data: [0, 0, 0, 1] }, { model: 'a', data: [0, 2, 0, 0] }])
  t.same(totalsOf(buckets), { quota: 40, count: 3, tokens: 12, models: 2 })
})

t.test('a range too long to fill shows only the buckets with data', async (t) => {
  const buckets: UsageBucket[] = [{ created_at: 7 * H, model_name: 'a', count: 1, quota: 1, token_used: 1 }]
  t.same(timeline(buckets, 'hour', 0, 365 * D), [7 * H])
})
