import type { UserView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import MenuItem from '@mui/material/MenuItem'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import BlockIcon from '@mui/icons-material/Block'
import { useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { RowAction } from '../../components/columns'
import { useConfirm } from '../../components/Confirm'
import { formatTime } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { bindPlan, invalidateSubscription, listPlans, userSubscriptions } from './api'
import { usageText } from './format'
import { STATUS_COLOUR } from './MySubscriptions'
import type { SubscriptionEntry } from './types'

/**
 * The edit-user drawer's subscriptions: every period the user holds or held, giving them a plan
 * without payment, and ending an active one now (both audited by the server).
 */
export function AdminSubscriptionSection ({ user }: { user: UserView }) {
  const { t } = useTranslation()
  const load = useCallback(async () => await userSubscriptions(user.id), [user.id])
  const subs = useLoad(load, { initial: [], fresh: true })
  const plans = useLoad(listPlans, { initial: [], quiet: true }).data
  const [planId, setPlanId] = useState('')
  const [confirm, dialog] = useConfirm()
  const { act, busy } = useAction(subs.reload)
  const name = user.username

  const bind = async () => {
    const plan = plans.find((p) => String(p.plan.id) === planId)?.plan
    if (plan === undefined) return
    const done = await act(async () => await bindPlan(user.id, plan.id), { done: t('subscription.user.bound', { title: plan.title, user: name }) })
    if (done !== undefined) setPlanId('')
  }

  const invalidate = async ({ subscription: s }: SubscriptionEntry) => {
    const ok = await confirm({
      title: t('subscription.user.invalidateTitle'),
      body: t('subscription.user.invalidateBody', { title: s.plan_title, user: name }),
      action: t('subscription.user.invalidate'),
      danger: true
    })
    if (ok) await act(async () => await invalidateSubscription(s.id), { done: t('subscription.user.invalidated') })
  }

  return (
    <Box component='section' aria-label={t('subscription.user.section')} data-testid='user-subscription-section'>
      <Typography variant='subtitle2' sx={{ mb: 1.5 }}>{t('subscription.user.section')}</Typography>
      <Stack spacing={1}>
        {!subs.loading && subs.data.length === 0 && <Typography variant='body2' color='text.secondary'>{t('subscription.user.empty')}</Typography>}
        {subs.data.map((entry) => <SubscriptionLine key={entry.subscription.id} entry={entry} busy={busy} onInvalidate={() => { void invalidate(entry) }} />)}
      </Stack>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} useFlexGap sx={{ mt: 2, alignItems: { sm: 'flex-start' } }}>
        <TextField
          select size='small' label={t('subscription.user.plan')} value={planId} onChange={(e) => { setPlanId(e.target.value) }}
          sx={{ flex: 1, minWidth: 0 }} disabled={plans.length === 0}
          helperText={plans.length === 0 ? t('subscription.user.noPlans') : undefined}
        >
          {plans.map(({ plan }) => <MenuItem key={plan.id} value={String(plan.id)}>{plan.title}</MenuItem>)}
        </TextField>
        <Button variant='outlined' disabled={busy || planId === ''} onClick={() => { void bind() }}>{t('subscription.user.bind')}</Button>
      </Stack>
      {dialog}
    </Box>
  )
}

function SubscriptionLine ({ entry, busy, onInvalidate }: { entry: SubscriptionEntry, busy: boolean, onInvalidate: () => void }) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const { subscription: s, items } = entry
  return (
    <Paper variant='outlined' sx={{ p: 1.5 }} data-testid={`user-subscription-${s.id}`}>
      <Stack direction='row' spacing={1} sx={{ alignItems: 'flex-start' }}>
        <Box sx={{ flexGrow: 1, minWidth: 0 }}>
          <Stack direction='row' spacing={1} useFlexGap sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
            <Typography variant='body2' sx={{ fontWeight: 500, overflowWrap: 'anywhere' }}>{s.plan_title}</Typography>
            <Chip size='small' color={STATUS_COLOUR[s.status]} label={t(`subscription.mine.status.${s.status}`)} data-testid='user-subscription-status' />
            <Chip size='small' variant='outlined' label={t(`subscription.mine.source.${s.source}`)} />
          </Stack>
          <Typography variant='caption' color='text.secondary' component='p'>{t('subscription.mine.period', { start: formatTime(s.start_time), end: formatTime(s.end_time) })}</Typography>
          <Typography variant='caption' component='p' sx={{ overflowWrap: 'anywhere' }}>
            {items.map((item) => `${item.model_name}: ${usageText(item, status, t)}`).join(' · ')}
          </Typography>
        </Box>
        {s.status === 'active' && (
          <RowAction label={t('subscription.user.invalidateLabel', { title: s.plan_title, id: s.id })} color='error' disabled={busy} wrapped onClick={onInvalidate}>
            <BlockIcon fontSize='small' />
          </RowAction>
        )}
      </Stack>
    </Paper>
  )
}
