import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import LinearProgress from '@mui/material/LinearProgress'
import MenuItem from '@mui/material/MenuItem'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import SearchIcon from '@mui/icons-material/Search'
import { BarChart } from '@mui/x-charts/BarChart'
import { LineChart } from '@mui/x-charts/LineChart'
import { PieChart } from '@mui/x-charts/PieChart'
import dayjs from 'dayjs'
import { type FormEvent, type ReactNode, useEffect, useMemo, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { isAdmin, useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { parseTime, renderNumber, renderQuota } from '../../lib/format'
import { useLoad } from '../../lib/useLoad'
import { fetchUsage, type UsageQuery } from './api'
import { GRANULARITIES, type Granularity, seriesOf, timeline, totalsOf, withOthers } from './series'

const INPUT_TIME = 'YYYY-MM-DDTHH:mm:ss'
const CHART_HEIGHT = 300

interface Form {
  start: string
  end: string
  /** The end field still says "now": each query moves it to the current time. */
  endIsNow: boolean
  granularity: Granularity
  username: string
}

const granularityOf = (value: string | undefined): Granularity => (GRANULARITIES as readonly string[]).includes(value ?? '') ? value as Granularity : 'hour'

/** How far back the first view reaches: enough buckets to read a trend, few enough to read each. */
const DEFAULT_SPAN: Record<Granularity, [number, 'day' | 'week']> = { hour: [1, 'day'], day: [6, 'day'], week: [7, 'week'] }

function defaultForm (granularity: Granularity): Form {
  const [n, unit] = DEFAULT_SPAN[granularity]
  return { start: dayjs().startOf('day').subtract(n, unit).format(INPUT_TIME), end: dayjs().format(INPUT_TIME), endIsNow: true, granularity, username: '' }
}

function queryOf (form: Form): UsageQuery | undefined {
  const start = parseTime(form.start)
  const end = parseTime(form.end)
  if (start === undefined || end === undefined || start > end) return undefined
  // The field is to the second and the API's end is exclusive: include the second shown.
  return { start_timestamp: start, end_timestamp: end + 1, granularity: form.granularity, username: form.username }
}

/** Bucket labels: hours in local time; days and weeks are UTC buckets, so their UTC date. */
function labelOf (t: number, g: Granularity): string {
  return g === 'hour' ? dayjs.unix(t).format('MM-DD HH:mm') : new Date(t * 1000).toISOString().slice(0, 10)
}

/** Usage charts from the hourly quota_data buckets: the caller's own, or (admins) a user's or everyone's. */
export default function DetailPage () {
  const { t } = useTranslation()
  const { status } = useStatus()
  const { user } = useAuth()
  const notify = useNotify()
  const admin = isAdmin(user)
  // The default granularity comes from the status object: wait for it before the first query.
  const ready = status !== undefined
  const enabled = status?.enable_data_export !== false
  const [form, setForm] = useState<Form | undefined>()
  const [applied, setApplied] = useState<UsageQuery | undefined>()

  useEffect(() => {
    if (!ready || form !== undefined) return
    const first = defaultForm(granularityOf(status.data_export_default_time))
    setForm(first)
    setApplied(queryOf(first))
  }, [ready, form, status])

  const load = useMemo(() => !enabled || applied === undefined ? undefined : async () => await fetchUsage(admin, applied), [admin, applied, enabled])
  const { data: buckets, loading } = useLoad(load)

  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (form === undefined) return
    const fresh = form.endIsNow ? { ...form, end: dayjs().format(INPUT_TIME) } : form
    const q = queryOf(fresh)
    if (q === undefined) {
      notify.warning(t('detail.badTime'))
      return
    }
    setForm(fresh)
    setApplied(q)
  }
  const edit = (patch: Partial<Form>) => { setForm((f) => f === undefined ? f : { ...f, ...patch }) }

  const perUnit = status?.quota_per_unit ?? 0
  const currency = status?.display_in_currency === true && perUnit > 0
  const quotaValue = (quota: number) => currency ? quota / perUnit : quota
  const formatQuotaValue = (v: number | null) => v === null ? '' : currency ? `$${Number(v.toFixed(6))}` : renderNumber(v)

  const view = useMemo(() => {
    if (buckets === undefined || applied === undefined) return undefined
    const times = timeline(buckets, applied.granularity, applied.start_timestamp, applied.end_timestamp)
    // Charts name the top models and sum the rest; the totals count every model.
    const charted = withOthers(buckets, (count) => t('detail.others', { count }))
    const models = charted.models
    return {
      labels: times.map((x) => labelOf(x, applied.granularity)),
      models,
      quota: seriesOf(charted.buckets, times, models, (b) => b.quota),
      count: seriesOf(charted.buckets, times, models, (b) => b.count),
      totals: totalsOf(buckets),
      share: models.map((m, i) => ({ id: i, label: m, value: charted.buckets.filter((b) => b.model_name === m).reduce((s, b) => s + b.quota, 0) }))
    }
  }, [buckets, applied, t])

  const who = applied?.username?.trim() ?? ''
  const scope = !admin ? t('detail.scope.self') : who !== '' ? t('detail.scope.user', { name: who }) : t('detail.scope.all')

  return (
    <Stack spacing={2}>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ alignItems: { sm: 'baseline' } }}>
        <Typography variant='h5' component='h1'>{t('detail.title')}</Typography>
        {enabled && applied !== undefined && <Typography color='text.secondary' data-testid='detail-scope'>{scope}</Typography>}
      </Stack>
      {ready && !enabled && <Alert severity='info' data-testid='detail-disabled'>{t('detail.disabled')}</Alert>}
      {enabled && form !== undefined && (
        <>
          <Paper component='form' onSubmit={submit} sx={{ p: 2 }}>
            <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: 'repeat(2, minmax(0, 1fr))', md: 'repeat(3, minmax(0, 1fr))', xl: 'repeat(4, minmax(0, 1fr))' } }}>
              <TextField
                size='small' type='datetime-local' label={t('detail.start')} value={form.start}
                onChange={(e) => { edit({ start: e.target.value }) }}
                slotProps={{ inputLabel: { shrink: true }, htmlInput: { step: 1 } }}
              />
              <TextField
                size='small' type='datetime-local' label={t('detail.end')} value={form.end}
                onChange={(e) => { edit({ end: e.target.value, endIsNow: false }) }}
                slotProps={{ inputLabel: { shrink: true }, htmlInput: { step: 1 } }}
              />
              <TextField
                select size='small' label={t('detail.granularity')} value={form.granularity}
                onChange={(e) => { edit({ granularity: granularityOf(e.target.value) }) }}
              >
                <MenuItem value='hour'>{t('detail.granularities.hour')}</MenuItem>
                <MenuItem value='day'>{t('detail.granularities.day')}</MenuItem>
                <MenuItem value='week'>{t('detail.granularities.week')}</MenuItem>
              </TextField>
              {admin && (
                <TextField
                  size='small' label={t('detail.username')} helperText={t('detail.usernameHelp')} value={form.username}
                  onChange={(e) => { edit({ username: e.target.value }) }}
                />
              )}
              <Box><Button type='submit' variant='contained' startIcon={<SearchIcon />}>{t('detail.query')}</Button></Box>
            </Box>
          </Paper>
          {loading ? <LinearProgress /> : <Box sx={{ height: 4 }} />}
          {view !== undefined && (
            <>
              <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: 'repeat(2, minmax(0, 1fr))', md: 'repeat(4, minmax(0, 1fr))' } }}>
                <SummaryCard label={t('detail.cards.quota')} testId='card-quota'>{renderQuota(view.totals.quota, status, 4)}</SummaryCard>
                <SummaryCard label={t('detail.cards.requests')} testId='card-requests'>{renderNumber(view.totals.count)}</SummaryCard>
                <SummaryCard label={t('detail.cards.tokens')} testId='card-tokens'>{renderNumber(view.totals.tokens)}</SummaryCard>
                <SummaryCard label={t('detail.cards.models')} testId='card-models'>{view.totals.models}</SummaryCard>
              </Box>
              {view.models.length === 0 && <Alert severity='info'>{t('detail.empty')}</Alert>}
              <ChartCard title={t('detail.charts.quota')} testId='chart-quota'>
                <BarChart
                  height={CHART_HEIGHT}
                  xAxis={[{ scaleType: 'band', data: view.labels }]}
                  yAxis={[{ width: 72, valueFormatter: (v: number) => formatQuotaValue(v) }]}
                  series={view.quota.map((s) => ({ label: s.model, stack: 'quota', data: s.data.map(quotaValue), valueFormatter: formatQuotaValue }))}
                />
              </ChartCard>
              <ChartCard title={t('detail.charts.requests')} testId='chart-requests'>
                <LineChart
                  height={CHART_HEIGHT}
                  xAxis={[{ scaleType: 'point', data: view.labels }]}
                  yAxis={[{ tickMinStep: 1 }]}
                  series={view.count.map((s) => ({ label: s.model, data: s.data, showMark: false, curve: 'linear' }))}
                />
              </ChartCard>
              {view.share.length > 0 && (
                <ChartCard title={t('detail.charts.share')} testId='chart-share'>
                  <PieChart
                    height={CHART_HEIGHT}
                    series={[{ data: view.share.map((s) => ({ ...s, value: quotaValue(s.value) })), innerRadius: 50, valueFormatter: (v) => formatQuotaValue(v.value) }]}
                  />
                </ChartCard>
              )}
            </>
          )}
        </>
      )}
    </Stack>
  )
}

function SummaryCard ({ label, testId, children }: { label: string, testId: string, children: ReactNode }) {
  return (
    <Paper sx={{ p: 2, minWidth: 0 }} data-testid={testId}>
      <Typography variant='body2' color='text.secondary' noWrap>{label}</Typography>
      <Typography variant='h5' component='p' noWrap>{children}</Typography>
    </Paper>
  )
}

function ChartCard ({ title, testId, children }: { title: string, testId: string, children: ReactNode }) {
  return (
    <Paper sx={{ p: 2, minWidth: 0 }} data-testid={testId}>
      <Typography variant='subtitle1' gutterBottom>{title}</Typography>
      <Box sx={{ width: '100%', minWidth: 0 }}>{children}</Box>
    </Paper>
  )
}
