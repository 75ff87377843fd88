import Alert from '@mui/material/Alert'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import CreditCardIcon from '@mui/icons-material/CreditCard'
import { useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { renderQuota } from '../../lib/format'
import { quoteStripeTopUp, startStripePayment } from './api'
import { Figure } from './Figure'

function normalizeAmount (text: string): number {
  const n = Math.floor(Number(text))
  return Number.isFinite(n) && n >= 1 ? n : 1
}

/** Card payment through Stripe Checkout: quoted here, paid on Stripe's page. Shown only when enabled. */
export function StripeCard () {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const min = Math.max(1, status?.stripe_min_topup ?? 1)
  const currency = (status?.stripe_currency ?? 'usd').toUpperCase()
  const [amountText, setAmountText] = useState(String(min))
  const [confirm, setConfirm] = useState<{ amount: number, sum: string } | undefined>()
  const [busy, setBusy] = useState(false)
  const amount = normalizeAmount(amountText)
  const belowMin = amount < min
  // Stripe sends the browser back here with the outcome in the query string.
  const outcome = new URLSearchParams(window.location.search).get('stripe')

  useEffect(() => { setAmountText((text) => normalizeAmount(text) < min ? String(min) : text) }, [min])

  if (status?.enable_stripe_topup !== true) return null

  const ask = async () => {
    setAmountText(String(amount))
    if (belowMin) {
      notify.error(t('topup.belowMin', { min }))
      return
    }
    setBusy(true)
    try {
      setConfirm({ amount, sum: await quoteStripeTopUp(amount) })
    } catch (err) {
      notify.error(err)
    } finally {
      setBusy(false)
    }
  }

  const pay = async () => {
    if (confirm === undefined) return
    setBusy(true)
    try {
      window.location.assign(await startStripePayment(confirm.amount))
    } catch (err) {
      notify.error(err)
      setBusy(false)
    }
  }

  return (
    <Paper component='section' aria-label={t('topup.stripe.title')} sx={{ p: { xs: 2, sm: 3 } }}>
      <Typography variant='h6' component='h2' gutterBottom>{t('topup.stripe.title')}</Typography>
      <Stack spacing={2}>
        {outcome === 'success' && <Alert severity='success'>{t('topup.stripe.returned')}</Alert>}
        {outcome === 'cancel' && <Alert severity='info'>{t('topup.stripe.cancelled')}</Alert>}
        <Typography variant='body2' color='text.secondary'>{t('topup.stripe.help', { min })}</Typography>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} useFlexGap sx={{ alignItems: { sm: 'flex-start' } }}>
          <TextField
            label={t('topup.amount')}
            type='number'
            value={amountText}
            onChange={(e) => { setAmountText(e.target.value) }}
            onBlur={() => { setAmountText(String(amount)) }}
            error={belowMin}
            helperText={belowMin
              ? t('topup.belowMin', { min })
              : t('topup.amountHelp', { min, quota: renderQuota(amount * (status.quota_per_unit ?? 500_000), status) })}
            slotProps={{ htmlInput: { min: 1, step: 1, inputMode: 'numeric', 'data-testid': 'stripe-amount' } }}
            sx={{ maxWidth: { sm: 360 }, flex: 1 }}
          />
          <Button variant='contained' startIcon={<CreditCardIcon />} onClick={() => { void ask() }} disabled={busy} sx={{ mt: { sm: 1 } }}>
            {t('topup.stripe.pay')}
          </Button>
        </Stack>
      </Stack>

      <Dialog open={confirm !== undefined} onClose={() => { if (!busy) setConfirm(undefined) }} fullWidth maxWidth='xs'>
        <DialogTitle>{t('topup.confirmTitle')}</DialogTitle>
        <DialogContent>
          {confirm !== undefined && (
            <Stack spacing={1.5}>
              <Figure label={t('topup.confirmAmount')} value={`$${confirm.amount}`} testId='stripe-confirm-amount' />
              <Figure label={t('topup.confirmPayable')} value={t('topup.stripe.sum', { sum: confirm.sum, currency })} testId='stripe-confirm-payable' />
              <Figure label={t('topup.confirmMethod')} value={t('topup.stripe.method')} />
              <Alert severity='info'>{t('topup.stripe.hint')}</Alert>
            </Stack>
          )}
        </DialogContent>
        <DialogActions>
          <Button onClick={() => { setConfirm(undefined) }} disabled={busy}>{t('common.cancel')}</Button>
          <Button variant='contained' onClick={() => { void pay() }} disabled={busy}>{t('topup.pay')}</Button>
        </DialogActions>
      </Dialog>
    </Paper>
  )
}
