import Accordion from '@mui/material/Accordion'
import AccordionDetails from '@mui/material/AccordionDetails'
import AccordionSummary from '@mui/material/AccordionSummary'
import Box from '@mui/material/Box'
import Chip from '@mui/material/Chip'
import FormControlLabel from '@mui/material/FormControlLabel'
import LinearProgress from '@mui/material/LinearProgress'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import Typography from '@mui/material/Typography'
import ExpandMoreIcon from '@mui/icons-material/ExpandMore'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { formatTime } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { setAutoRenew } from './api'
import { usageText } from './format'
import type { SelfSubscriptions, SubscriptionEntry, SubscriptionItem, SubscriptionStatus } from './types'

export const STATUS_COLOUR: Record<SubscriptionStatus, 'success' | 'default' | 'error'> = { active: 'success', expired: 'default', cancelled: 'error' }

/** The caller's active subscriptions with what is left of each item, and the others folded away. */
export function MySubscriptions ({ data, loading, onChanged }: { data: SelfSubscriptions | undefined, loading: boolean, onChanged: () => void }) {
  const { t } = useTranslation()
  const all = data?.subscriptions ?? []
  const active = all.filter((s) => s.subscription.status === 'active')
  const history = all.filter((s) => s.subscription.status !== 'active')
  return (
    <Paper component='section' aria-label={t('subscription.mine.title')} sx={{ p: { xs: 2, sm: 3 } }} data-testid='my-subscriptions'>
      <Typography variant='h6' component='h2' gutterBottom>{t('subscription.mine.title')}</Typography>
      {loading && data === undefined && <LinearProgress />}
      {data !== undefined && active.length === 0 && <Typography variant='body2' color='text.secondary'>{t('subscription.mine.empty')}</Typography>}
      <Stack spacing={2}>
        {active.map((entry) => <ActiveSubscription key={entry.subscription.id} entry={entry} onChanged={onChanged} />)}
      </Stack>
      {history.length > 0 && (
        <Accordion disableGutters variant='outlined' sx={{ mt: 2 }} data-testid='subscription-history'>
          <AccordionSummary expandIcon={<ExpandMoreIcon />}>
            <Typography variant='subtitle2'>{t('subscription.mine.history', { count: history.length })}</Typography>
          </AccordionSummary>
          <AccordionDetails>
            <Stack spacing={1}>
              {history.map(({ subscription: s }) => (
                <Stack key={s.id} direction={{ xs: 'column', sm: 'row' }} spacing={{ xs: 0.5, sm: 1.5 }} sx={{ alignItems: { sm: 'center' } }}>
                  <Typography variant='body2' sx={{ fontWeight: 500, overflowWrap: 'anywhere', minWidth: 0 }}>{s.plan_title}</Typography>
                  <Chip size='small' color={STATUS_COLOUR[s.status]} label={t(`subscription.mine.status.${s.status}`)} sx={{ alignSelf: { xs: 'flex-start', sm: 'center' } }} />
                  <Typography variant='body2' color='text.secondary'>{t('subscription.mine.period', { start: formatTime(s.start_time), end: formatTime(s.end_time) })}</Typography>
                </Stack>
              ))}
            </Stack>
          </AccordionDetails>
        </Accordion>
      )}
    </Paper>
  )
}

function ActiveSubscription ({ entry, onChanged }: { entry: SubscriptionEntry, onChanged: () => void }) {
  const { t } = useTranslation()
  const { subscription: s, items } = entry
  const [renew, setRenew] = useState(s.auto_renew)
  const { act, busy } = useAction()
  const toggle = async (on: boolean) => {
    setRenew(on)
    const done = await act(async () => await setAutoRenew(s.id, on), { done: on ? t('subscription.mine.autoRenewOn') : t('subscription.mine.autoRenewOff') })
    if (done === undefined) {
      setRenew(!on)
      onChanged()
    }
  }
  return (
    <Paper variant='outlined' sx={{ p: 2 }} data-testid={`subscription-${s.id}`}>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ alignItems: { sm: 'center' }, mb: 1.5 }}>
        <Box sx={{ flexGrow: 1, minWidth: 0 }}>
          <Stack direction='row' spacing={1} useFlexGap sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
            <Typography variant='subtitle1' component='h3' sx={{ fontWeight: 500, overflowWrap: 'anywhere' }}>{s.plan_title}</Typography>
            <Chip size='small' color={STATUS_COLOUR[s.status]} label={t(`subscription.mine.status.${s.status}`)} />
            <Chip size='small' variant='outlined' label={t(`subscription.mine.source.${s.source}`)} />
          </Stack>
          <Typography variant='body2' color='text.secondary' data-testid='subscription-end'>{t('subscription.mine.until', { time: formatTime(s.end_time) })}</Typography>
        </Box>
        <FormControlLabel
          control={<Switch checked={renew} disabled={busy} onChange={(e) => { void toggle(e.target.checked) }} />}
          label={t('subscription.mine.autoRenew')}
          sx={{ mr: 0 }}
        />
      </Stack>
      <Stack spacing={1.25}>
        {items.map((item) => <ItemUsage key={item.id} item={item} />)}
      </Stack>
    </Paper>
  )
}

function ItemUsage ({ item }: { item: SubscriptionItem }) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const used = Math.min(item.amount_used, item.amount_total)
  const share = item.amount_total > 0 ? (used / item.amount_total) * 100 : 100
  const label = usageText(item, status, t)
  return (
    <Box data-testid='subscription-item'>
      <Stack direction='row' spacing={1} sx={{ justifyContent: 'space-between', flexWrap: 'wrap' }} useFlexGap>
        <Typography variant='body2' sx={{ fontWeight: 500, overflowWrap: 'anywhere', minWidth: 0 }}>{item.model_name}</Typography>
        <Typography variant='body2' color='text.secondary' data-testid='subscription-item-usage'>{label}</Typography>
      </Stack>
      <LinearProgress variant='determinate' value={share} color={share >= 90 ? 'warning' : 'primary'} aria-label={`${item.model_name}: ${label}`} sx={{ height: 6, borderRadius: 3, mt: 0.5 }} />
    </Box>
  )
}
