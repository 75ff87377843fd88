import type { CheckinRecord, CheckinStatusView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import IconButton from '@mui/material/IconButton'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import CheckCircleIcon from '@mui/icons-material/CheckCircle'
import ChevronLeftIcon from '@mui/icons-material/ChevronLeft'
import ChevronRightIcon from '@mui/icons-material/ChevronRight'
import EventAvailableIcon from '@mui/icons-material/EventAvailable'
import { useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { renderQuota } from '../../lib/format'
import { useLoad } from '../../lib/useLoad'
import { useTurnstile } from '../auth/Turnstile'
import { checkIn, getCheckin } from './api'

// Check-in days are UTC days (the server has no time-zone setting), so the console counts in UTC too.
const utcToday = (): string => new Date().toISOString().slice(0, 10)

/** 'YYYY-MM' moved by `delta` months. */
function shiftMonth (month: string, delta: number): string {
  const [y = 1970, m = 1] = month.split('-').map(Number)
  return new Date(Date.UTC(y, m - 1 + delta, 1)).toISOString().slice(0, 7)
}

/** The month's days as calendar cells, weeks starting on Monday; null pads the first week. */
function monthCells (month: string): Array<string | null> {
  const [y = 1970, m = 1] = month.split('-').map(Number)
  const lead = (new Date(Date.UTC(y, m - 1, 1)).getUTCDay() + 6) % 7
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate()
  return [...Array<null>(lead).fill(null), ...Array.from({ length: days }, (_, i) => `${month}-${String(i + 1).padStart(2, '0')}`)]
}

/**
 * new-api's daily check-in on the wallet: the button (once a day), this month's calendar and
 * history with totals. Hidden while the administrator has check-in off.
 */
export function CheckinCard ({ onCheckedIn }: { onCheckedIn: () => Promise<void> }) {
  const { t, i18n } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const turnstile = useTurnstile()
  const [month, setMonth] = useState(() => utcToday().slice(0, 7))
  const [busy, setBusy] = useState(false)
  const load = useCallback(async () => await getCheckin(month), [month])
  const { data, reload } = useLoad<CheckinStatusView>(load)

  if (data === undefined || !data.enabled) return null

  // Small rewards (new-api's default is 1,000 to 10,000 units, $0.002 to $0.02) keep their digits.
  const money = (quota: number) => renderQuota(quota, status, status?.display_in_currency === true && quota > 0 && quota * 100 < status.quota_per_unit ? 4 : 2)
  const stats = data.stats
  const thisMonth = utcToday().slice(0, 7)
  const byDay = new Map<string, CheckinRecord>(stats.records.map((r) => [r.checkin_date, r]))
  const monthTotal = stats.records.reduce((sum, r) => sum + r.quota_awarded, 0)
  const monthName = new Intl.DateTimeFormat(i18n.language === 'en' ? 'en-US' : 'zh-CN', { year: 'numeric', month: 'long', timeZone: 'UTC' })
    .format(new Date(`${month}-01T00:00:00Z`))
  const weekdays = t('topup.checkin.weekdays').split(' ')

  const submit = async () => {
    if (turnstile.missing) {
      notify.error(t('auth.turnstileWait'))
      return
    }
    setBusy(true)
    try {
      const result = await checkIn(turnstile.spend())
      notify.success(t('topup.checkin.awarded', { quota: money(result.quota_awarded) }))
      setMonth(result.checkin_date.slice(0, 7))
      await onCheckedIn()
    } catch (err) {
      notify.error(err)
    } finally {
      setBusy(false)
      // Checked in or refused (another tab may have checked in first): show what the server holds.
      reload()
    }
  }

  return (
    <Paper component='section' aria-label={t('topup.checkin.title')} data-testid='checkin-card' sx={{ p: { xs: 2, sm: 3 }, minWidth: 0 }}>
      <Typography variant='h6' component='h2' gutterBottom>{t('topup.checkin.title')}</Typography>
      <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>
        {data.min_quota === data.max_quota
          ? t('topup.checkin.helpFixed', { quota: money(data.min_quota) })
          : t('topup.checkin.help', { min: money(data.min_quota), max: money(data.max_quota) })}
      </Typography>

      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} useFlexGap sx={{ alignItems: { sm: 'center' }, mb: 2 }}>
        <Button
          variant='contained'
          startIcon={stats.checked_in_today ? <CheckCircleIcon /> : <EventAvailableIcon />}
          disabled={stats.checked_in_today || busy}
          onClick={() => { void submit() }}
          sx={{ alignSelf: { xs: 'stretch', sm: 'center' } }}
        >
          {stats.checked_in_today ? t('topup.checkin.done') : t('topup.checkin.button')}
        </Button>
        <Box sx={{ minWidth: 0 }}>
          <Typography variant='body2' data-testid='checkin-month-total'>
            {t('topup.checkin.monthTotal', { month: monthName, n: stats.checkin_count, quota: money(monthTotal) })}
          </Typography>
          <Typography variant='body2' color='text.secondary' data-testid='checkin-all-total'>
            {t('topup.checkin.allTotal', { n: stats.total_checkins ?? 0, quota: money(stats.total_quota ?? 0) })}
          </Typography>
        </Box>
      </Stack>
      {!stats.checked_in_today && turnstile.widget}

      <Stack direction='row' sx={{ alignItems: 'center', justifyContent: 'space-between', mb: 1 }}>
        <IconButton size='small' aria-label={t('topup.checkin.previousMonth')} onClick={() => { setMonth((m) => shiftMonth(m, -1)) }}>
          <ChevronLeftIcon />
        </IconButton>
        <Typography variant='subtitle1' component='h3' data-testid='checkin-month'>{monthName}</Typography>
        <IconButton size='small' aria-label={t('topup.checkin.nextMonth')} disabled={month >= thisMonth} onClick={() => { setMonth((m) => shiftMonth(m, 1)) }}>
          <ChevronRightIcon />
        </IconButton>
      </Stack>

      {/* A picture of the month; the history list below says the same to screen readers. */}
      <Box aria-hidden data-testid='checkin-calendar' sx={{ display: 'grid', gridTemplateColumns: 'repeat(7, minmax(0, 1fr))', gap: 0.5 }}>
        {weekdays.map((d) => (
          <Typography key={d} variant='caption' color='text.secondary' sx={{ textAlign: 'center' }}>{d}</Typography>
        ))}
        {monthCells(month).map((day, i) => {
          if (day === null) return <Box key={`pad-${i}`} />
          const record = byDay.get(day)
          const isToday = day === utcToday()
          const label = record === undefined ? day : t('topup.checkin.dayLabel', { day, quota: money(record.quota_awarded) })
          return (
            <Box
              key={day}
              title={label}
              data-day={day}
              data-checked={record !== undefined}
              sx={{
                minWidth: 0,
                minHeight: 44,
                px: 0.25,
                py: 0.5,
                borderRadius: 1,
                textAlign: 'center',
                border: 1,
                borderColor: isToday ? 'primary.main' : 'divider',
                bgcolor: record !== undefined ? 'success.main' : 'transparent',
                color: record !== undefined ? 'success.contrastText' : 'text.primary'
              }}
            >
              <Typography variant='body2' sx={{ lineHeight: 1.4, fontWeight: isToday ? 700 : 400 }}>{Number(day.slice(8))}</Typography>
              {record !== undefined && (
                <Typography variant='caption' component='div' sx={{ fontSize: 10, lineHeight: 1.2, overflowWrap: 'anywhere' }}>
                  +{money(record.quota_awarded)}
                </Typography>
              )}
            </Box>
          )
        })}
      </Box>

      <Typography variant='subtitle2' component='h3' sx={{ mt: 2, mb: 0.5 }}>{t('topup.checkin.history')}</Typography>
      {stats.records.length === 0
        ? <Typography variant='body2' color='text.secondary'>{t('topup.checkin.none')}</Typography>
        : (
          <Box component='ul' data-testid='checkin-records' sx={{ listStyle: 'none', p: 0, m: 0 }}>
            {stats.records.map((r) => (
              <Box component='li' key={r.checkin_date} sx={{ display: 'flex', justifyContent: 'space-between', gap: 2, py: 0.5, borderBottom: 1, borderColor: 'divider' }}>
                <Typography variant='body2'>{r.checkin_date}</Typography>
                <Typography variant='body2' sx={{ color: 'success.main' }}>+{money(r.quota_awarded)}</Typography>
              </Box>
            ))}
          </Box>
          )}
      <Typography variant='caption' color='text.secondary' component='p' sx={{ mt: 1 }}>{t('topup.checkin.utc')}</Typography>
    </Paper>
  )
}
