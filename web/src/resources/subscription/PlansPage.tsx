import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import AccountBalanceWalletIcon from '@mui/icons-material/AccountBalanceWalletOutlined'
import CheckIcon from '@mui/icons-material/Check'
import CreditCardIcon from '@mui/icons-material/CreditCard'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useAuth } from '../../auth/AuthContext'
import { useConfirm } from '../../components/Confirm'
import { useNotify } from '../../components/Notify'
import { PageTitle } from '../../components/PageTitle'
import { renderQuota } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { submitPaymentForm } from '../topup/api'
import { mySubscriptions, offeredPlans, payWithBalance, startCheckout, startEpay } from './api'
import { BillingPreferenceCard } from './BillingPreferenceCard'
import { durationText, itemText, priceText } from './format'
import { MySubscriptions } from './MySubscriptions'
import type { OfferedPlan } from './types'

/** epay's pay types, as the wallet's top-up offers them. */
const EPAY = [{ method: 'zfb', label: 'subscription.plans.alipay' }, { method: 'wx', label: 'subscription.plans.wechat' }] as const

/** The plans on offer, buying one, the caller's subscriptions and their billing preference. */
export default function PlansPage () {
  const { t, i18n } = useTranslation()
  const { refresh } = useAuth()
  const plans = useLoad(offeredPlans, { initial: [] })
  const mine = useLoad(mySubscriptions)
  const reloadMine = mine.reload
  const { act, busy } = useAction(reloadMine)
  const [confirm, confirmDialog] = useConfirm()
  const notify = useNotify()
  const { status } = useStatus()

  const buyWithBalance = async ({ plan, quota_price: quota }: OfferedPlan) => {
    const ok = await confirm({
      title: t('subscription.plans.balanceTitle', { title: plan.title }),
      body: t('subscription.plans.balanceBody', { quota: renderQuota(quota, status), duration: durationText(plan, t) }),
      action: t('subscription.plans.buy')
    })
    if (!ok) return
    const bought = await act(async () => await payWithBalance(plan.id), { done: t('subscription.plans.bought', { title: plan.title }) })
    // The wallet balance moved: the shell's user (and its balance) is read again.
    if (bought !== undefined) void refresh().catch(() => undefined)
  }

  const buyOnline = async ({ plan }: OfferedPlan, label: string, go: () => Promise<void>) => {
    const ok = await confirm({
      title: t('subscription.plans.onlineTitle', { title: plan.title }),
      body: t('subscription.plans.onlineBody', { price: priceText(plan.price_amount, plan.currency, i18n.language), method: label }),
      action: t('subscription.plans.pay')
    })
    if (!ok) return
    await act(go, { reload: 'never' })
  }

  const epay = async (entry: OfferedPlan, method: string, label: string) => {
    await buyOnline(entry, label, async () => {
      const form = await startEpay(entry.plan.id, method)
      if (form === undefined) {
        notify.error(t('subscription.plans.payFailed'))
        return
      }
      submitPaymentForm(form.url, form.fields)
    })
  }

  const checkout = async (entry: OfferedPlan, provider: 'stripe' | 'creem') => {
    await buyOnline(entry, t(`subscription.plans.${provider}`), async () => {
      window.location.assign(await startCheckout(provider, entry.plan.id))
    })
  }

  return (
    <Stack spacing={2} sx={{ maxWidth: 1200 }}>
      <PageTitle title={t('subscription.plans.title')} intro={t('subscription.plans.intro')} />
      {!plans.loading && plans.data.length === 0 && plans.error === undefined && <Alert severity='info'>{t('subscription.plans.empty')}</Alert>}
      <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: 'minmax(0, 1fr)', sm: 'repeat(2, minmax(0, 1fr))', lg: 'repeat(3, minmax(0, 1fr))' } }}>
        {plans.data.map((entry) => (
          <PlanCard
            key={entry.plan.id}
            entry={entry}
            busy={busy}
            onBalance={() => { void buyWithBalance(entry) }}
            onEpay={(method, label) => { void epay(entry, method, label) }}
            onCheckout={(provider) => { void checkout(entry, provider) }}
          />
        ))}
      </Box>
      <MySubscriptions data={mine.data} loading={mine.loading} onChanged={reloadMine} />
      <BillingPreferenceCard
        value={mine.data?.billing_preference}
        onSaved={(p) => { mine.setData((d) => d === undefined ? d : { ...d, billing_preference: p }) }}
      />
      {confirmDialog}
    </Stack>
  )
}

interface PlanCardProps {
  entry: OfferedPlan
  busy: boolean
  onBalance: () => void
  onEpay: (method: string, label: string) => void
  onCheckout: (provider: 'stripe' | 'creem') => void
}

function PlanCard ({ entry, busy, onBalance, onEpay, onCheckout }: PlanCardProps) {
  const { t, i18n } = useTranslation()
  const { status } = useStatus()
  const { plan, items, pay_methods: pay } = entry
  return (
    <Paper component='section' aria-label={plan.title} data-testid={`plan-card-${plan.id}`} sx={{ p: { xs: 2, sm: 3 }, display: 'flex', flexDirection: 'column', gap: 1.5, minWidth: 0 }}>
      <Box>
        <Typography variant='h6' component='h2' sx={{ overflowWrap: 'anywhere' }}>{plan.title}</Typography>
        {plan.subtitle !== '' && <Typography variant='body2' color='text.secondary' sx={{ overflowWrap: 'anywhere' }}>{plan.subtitle}</Typography>}
      </Box>
      <Box>
        <Typography variant='h4' component='p' data-testid='plan-price'>{priceText(plan.price_amount, plan.currency, i18n.language)}</Typography>
        <Typography variant='body2' color='text.secondary'>{t('subscription.plans.per', { duration: durationText(plan, t) })}</Typography>
      </Box>
      <Box sx={{ flexGrow: 1 }}>
        <Typography variant='subtitle2' gutterBottom>{t('subscription.plans.includes')}</Typography>
        <Stack component='ul' spacing={0.5} sx={{ listStyle: 'none', p: 0, m: 0 }} data-testid='plan-includes'>
          {items.map((item) => (
            <Stack component='li' key={item.id} direction='row' spacing={1} sx={{ alignItems: 'flex-start' }}>
              <CheckIcon fontSize='small' color='success' sx={{ mt: 0.25 }} />
              <Typography variant='body2' sx={{ overflowWrap: 'anywhere', minWidth: 0 }}>{itemText(item, status, t)}</Typography>
            </Stack>
          ))}
        </Stack>
      </Box>
      <Stack direction='row' useFlexGap sx={{ gap: 1, flexWrap: 'wrap' }}>
        {pay.balance && (
          <Button variant='contained' startIcon={<AccountBalanceWalletIcon />} disabled={busy} onClick={onBalance} aria-label={t('subscription.plans.payBalanceLabel', { title: plan.title })}>
            {t('subscription.plans.payBalance')}
          </Button>
        )}
        {pay.epay && EPAY.map((m) => (
          <Button key={m.method} variant='outlined' disabled={busy} onClick={() => { onEpay(m.method, t(m.label)) }}>{t(m.label)}</Button>
        ))}
        {pay.stripe && <Button variant='outlined' startIcon={<CreditCardIcon />} disabled={busy} onClick={() => { onCheckout('stripe') }}>{t('subscription.plans.stripe')}</Button>}
        {pay.creem && <Button variant='outlined' startIcon={<CreditCardIcon />} disabled={busy} onClick={() => { onCheckout('creem') }}>{t('subscription.plans.creem')}</Button>}
      </Stack>
    </Paper>
  )
}
