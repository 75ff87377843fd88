/** Dashboard bucket sizes (docs/domain.md). */
export type Granularity = 'hour' | 'day' | 'week'
export const GRANULARITIES: readonly Granularity[] = ['hour', 'day', 'week']

/** One model's usage in one bucket, as `GET /api/data/` answers. */
export interface UsageBucket {
  /** First second of the bucket (unix seconds; days and weeks start at 00:00 UTC, weeks on Monday). */
  created_at: number
  model_name: string
  count: number
  quota: number
  token_used: number
}

const HOUR = 3600
const DAY = 86_400
const WEEK = 7 * DAY
const STEP: Record<Granularity, number> = { hour: HOUR, day: DAY, week: WEEK }
/** Above this many buckets the axis shows only the buckets with data (a year by the hour is too dense to fill). */
const MAX_FILLED = 500

/** The start of the bucket holding `t`, as the server computes it (UTC days, weeks from Monday). */
export function bucketStart (t: number, g: Granularity): number {
  if (g === 'hour') return t - (((t % HOUR) + HOUR) % HOUR)
  const day = Math.floor(t / DAY)
  if (g === 'day') return day * DAY
  // 1970-01-01 was a Thursday: Monday is 3 days before it.
  const weekday = (((day + 3) % 7) + 7) % 7
  return (day - weekday) * DAY
}

/**
 * Every bucket from `start` to `end` (so quiet periods show as zero), or only the buckets with
 * data when the range holds too many to draw.
 */
export function timeline (buckets: readonly UsageBucket[], g: Granularity, start: number, end: number): number[] {
  const first = bucketStart(start, g)
  const count = Math.ceil((end - first) / STEP[g])
  if (count > 0 && count <= MAX_FILLED) {
    const all = Array.from({ length: count }, (_v, i) => first + i * STEP[g])
    // Buckets outside the computed range (clock skew) still get a place.
    const extra = buckets.map((b) => b.created_at).filter((t) => t < first || t >= first + count * STEP[g])
    return [...new Set([...all, ...extra])].sort((a, b) => a - b)
  }
  return [...new Set(buckets.map((b) => b.created_at))].sort((a, b) => a - b)
}

/** Models by total quota, largest first (then by name). */
export function modelsOf (buckets: readonly UsageBucket[]): string[] {
  const sum = new Map<string, number>()
  for (const b of buckets) sum.set(b.model_name, (sum.get(b.model_name) ?? 0) + b.quota)
  return [...sum.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([m]) => m)
}

/** Most models a chart names; the rest are summed as one series, as monitoring dashboards do. */
export const CHART_MODELS = 8

/**
 * The buckets as the charts draw them: the {@link CHART_MODELS} models with the most quota keep
 * their names, the others are summed under `other(n)` (n = how many), listed last. Grouping a
 * single model would hide its name for nothing, so nine models are all shown.
 */
export function withOthers (buckets: readonly UsageBucket[], other: (n: number) => string, limit = CHART_MODELS): { buckets: readonly UsageBucket[], models: string[] } {
  const models = modelsOf(buckets)
  if (models.length <= limit + 1) return { buckets, models }
  const shown = new Set(models.slice(0, limit))
  const label = other(models.length - limit)
  return {
    buckets: buckets.map((b) => shown.has(b.model_name) ? b : { ...b, model_name: label }),
    models: [...models.slice(0, limit), label]
  }
}

/** One value per time per model (0 where the model had no use). */
export function seriesOf (buckets: readonly UsageBucket[], times: readonly number[], models: readonly string[], pick: (b: UsageBucket) => number): Array<{ model: string, data: number[] }> {
  const index = new Map(times.map((t, i) => [t, i]))
  const out = new Map(models.map((m) => [m, times.map(() => 0)]))
  for (const b of buckets) {
    const i = index.get(b.created_at)
    const row = out.get(b.model_name)
    if (i !== undefined && row !== undefined) row[i] = (row[i] ?? 0) + pick(b)
  }
  return models.map((model) => ({ model, data: out.get(model) ?? [] }))
}

export interface UsageTotals { quota: number, count: number, tokens: number, models: number }

export function totalsOf (buckets: readonly UsageBucket[]): UsageTotals {
  return {
    quota: buckets.reduce((s, b) => s + b.quota, 0),
    count: buckets.reduce((s, b) => s + b.count, 0),
    tokens: buckets.reduce((s, b) => s + b.token_used, 0),
    models: new Set(buckets.map((b) => b.model_name)).size
  }
}
