import t from 'tap'
import { bucketStart, CHART_MODELS, modelsOf, seriesOf, timeline, totalsOf, type UsageBucket, withOthers } from './series.ts'

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

t.test('charts name the top models and sum the rest as one "other" series, listed last', async (t) => {
  // 40 models, model m<i> with quota 100 - i, in two buckets each.
  const buckets: UsageBucket[] = Array.from({ length: 40 }, (_v, i) => [0, H].map((at) => ({ created_at: at, model_name: `m${i}`, count: 1, quota: 100 - i, token_used: 1 }))).flat()
  const charted = withOthers(buckets, (n) => `Other (${n} models)`)
  t.equal(charted.models.length, CHART_MODELS + 1)
  t.same(charted.models, [...Array.from({ length: CHART_MODELS }, (_v, i) => `m${i}`), `Other (${40 - CHART_MODELS} models)`])
  const quota = seriesOf(charted.buckets, [0, H], charted.models, (b) => b.quota)
  const rest = Array.from({ length: 40 - CHART_MODELS }, (_v, i) => 100 - (i + CHART_MODELS)).reduce((a, b) => a + b, 0)
  t.same(quota.at(-1), { model: `Other (${40 - CHART_MODELS} models)`, data: [rest, rest] }, 'the others are summed per time')
  t.equal(quota.reduce((s, x) => s + x.data[0]!, 0), buckets.filter((b) => b.created_at === 0).reduce((s, b) => s + b.quota, 0), 'nothing is lost')
  t.equal(totalsOf(buckets).models, 40, 'the totals still count every model')
  const nine = buckets.filter((b) => Number(b.model_name.slice(1)) < CHART_MODELS + 1)
  t.same(withOthers(nine, () => 'other').models, modelsOf(nine), 'one model over the limit is shown by name, not grouped')
})
