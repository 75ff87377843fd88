import type { PaymentMethod, UserView } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import RedeemIcon from '@mui/icons-material/Redeem'
import ShoppingCartIcon from '@mui/icons-material/ShoppingCartOutlined'
import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { renderNumber, renderQuota } from '../../lib/format'
import { Figure } from './Figure'
import { quoteTopUp, redeemCode, startPayment, submitPaymentForm } from './api'
import { CheckinCard } from './CheckinCard'
import { CreemCard, creemEnabled } from './CreemCard'
import { StripeCard } from './StripeCard'

/** The amount as a whole number, forced to at least 1 (docs/domain.md, Top-up). */
function normalizeAmount (text: string): number {
  const n = Math.floor(Number(text))
  return Number.isFinite(n) && n >= 1 ? n : 1
}

function Card ({ title, children }: { title: string, children: ReactNode }) {
  return (
    <Paper component='section' aria-label={title} sx={{ p: { xs: 2, sm: 3 } }}>
      <Typography variant='h6' component='h2' gutterBottom>{title}</Typography>
      {children}
    </Paper>
  )
}

/** The wallet: balance, redeeming a code, and online top-up. */
export default function TopupPage () {
  const { t } = useTranslation()
  const { status } = useStatus()
  const { refresh } = useAuth()
  const notify = useNotify()
  const [self, setSelf] = useState<UserView | undefined>()
  const [code, setCode] = useState('')
  const [redeeming, setRedeeming] = useState(false)
  const min = Math.max(1, status?.min_topup ?? 1)
  const [amountText, setAmountText] = useState(String(min))
  const [payable, setPayable] = useState<string | undefined>()
  const [quoteError, setQuoteError] = useState<string | undefined>()
  const [confirm, setConfirm] = useState<{ amount: number, sum: string, method: PaymentMethod } | undefined>()
  const [paying, setPaying] = useState(false)
  const online = status?.enable_online_topup === true
  const amount = normalizeAmount(amountText)
  const belowMin = amount < min

  const loadSelf = useCallback(async () => {
    try {
      setSelf(await refresh())
    } catch (err) {
      notify.error(err)
    }
  }, [refresh, notify])
  useEffect(() => { void loadSelf() }, [loadSelf])

  // The minimum arrives with the status object: start from it rather than from 1.
  useEffect(() => { setAmountText((text) => normalizeAmount(text) < min ? String(min) : text) }, [min])

  // The payable sum follows the amount as it is typed, once typing pauses.
  useEffect(() => {
    if (!online || belowMin) {
      setPayable(undefined)
      setQuoteError(undefined)
      return
    }
    let live = true
    setPayable(undefined)
    const timer = setTimeout(() => {
      quoteTopUp(amount).then((sum) => {
        if (!live) return
        setPayable(sum)
        setQuoteError(undefined)
      }, (err: unknown) => { if (live) setQuoteError(err instanceof Error ? err.message : String(err)) })
    }, 300)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [online, amount, belowMin])

  const redeem = async (e: FormEvent) => {
    e.preventDefault()
    if (code.trim() === '') {
      notify.error(t('topup.codeEmpty'))
      return
    }
    setRedeeming(true)
    try {
      const added = await redeemCode(code.trim())
      notify.success(t('topup.redeemed', { quota: renderQuota(added, status) }))
      setCode('')
      await loadSelf()
    } catch (err) {
      notify.error(err)
    } finally {
      setRedeeming(false)
    }
  }

  const buyCodes = () => {
    const link = status?.top_up_link ?? ''
    if (link === '') {
      notify.error(t('topup.noLink'))
      return
    }
    window.open(link, '_blank', 'noopener,noreferrer')
  }

  const askToPay = async (method: PaymentMethod) => {
    setAmountText(String(amount))
    if (belowMin) {
      notify.error(t('topup.belowMin', { min }))
      return
    }
    try {
      // Quoted again for the dialog: the sum shown must be the one for exactly this amount.
      setConfirm({ amount, sum: await quoteTopUp(amount), method })
    } catch (err) {
      notify.error(err)
    }
  }

  const pay = async () => {
    if (confirm === undefined) return
    setPaying(true)
    try {
      const form = await startPayment(confirm.amount, confirm.method)
      if (form === undefined) {
        notify.error(t('topup.payFailed'))
        return
      }
      submitPaymentForm(form.url, form.fields)
    } catch (err) {
      notify.error(err)
    } finally {
      setPaying(false)
    }
  }

  const methodName = (m: PaymentMethod) => m === 'zfb' ? t('topup.alipay') : t('topup.wechat')

  return (
    <Stack spacing={2} sx={{ maxWidth: 900 }}>
      <Typography variant='h5' component='h1'>{t('topup.title')}</Typography>

      <Card title={t('topup.account')}>
        <Stack direction='row' spacing={4} useFlexGap sx={{ flexWrap: 'wrap' }}>
          <Figure label={t('topup.balance')} value={self === undefined ? '…' : renderQuota(self.quota, status)} testId='balance' />
          <Figure label={t('topup.used')} value={self === undefined ? '…' : renderQuota(self.used_quota, status)} />
          <Figure label={t('topup.requests')} value={self === undefined ? '…' : renderNumber(self.request_count)} />
        </Stack>
      </Card>

      <CheckinCard onCheckedIn={loadSelf} />

      <Card title={t('topup.redeemTitle')}>
        <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>{t('topup.redeemHelp')}</Typography>
        <Stack component='form' noValidate onSubmit={(e) => { void redeem(e) }} direction={{ xs: 'column', md: 'row' }} spacing={1} useFlexGap>
          <TextField
            size='small'
            label={t('topup.code')}
            value={code}
            onChange={(e) => { setCode(e.target.value) }}
            sx={{ flex: 1, minWidth: 0 }}
            slotProps={{ htmlInput: { autoComplete: 'off', spellCheck: false } }}
          />
          <Button type='submit' variant='contained' startIcon={<RedeemIcon />} disabled={redeeming}>{t('topup.redeem')}</Button>
          <Button variant='outlined' startIcon={<ShoppingCartIcon />} onClick={buyCodes}>{t('topup.buyCodes')}</Button>
        </Stack>
      </Card>

      {/* With only card payment (Stripe or Creem) on, its own card stands in for the epay one. */}
      {(online || (status?.enable_stripe_topup !== true && !creemEnabled(status))) && (
      <Card title={t('topup.onlineTitle')}>
        {!online
          ? <Alert severity='info'>{t('topup.onlineDisabled')}</Alert>
          : (
            <Stack spacing={2}>
              <TextField
                label={t('topup.amount')}
                type='number'
                value={amountText}
                onChange={(e) => { setAmountText(e.target.value) }}
                onBlur={() => { setAmountText(String(amount)) }}
                error={belowMin}
                helperText={belowMin
                  ? t('topup.belowMin', { min })
                  : t('topup.amountHelp', { min, quota: renderQuota(amount * (status?.quota_per_unit ?? 500_000), status) })}
                slotProps={{ htmlInput: { min: 1, step: 1, inputMode: 'numeric' } }}
                sx={{ maxWidth: { sm: 360 } }}
              />
              <Box>
                <Typography variant='body2' color='text.secondary'>{t('topup.payable')}</Typography>
                <Typography variant='h5' data-testid='payable'>
                  {belowMin ? '-' : payable !== undefined ? t('topup.payableSum', { sum: payable }) : quoteError === undefined ? t('topup.quoting') : '-'}
                </Typography>
                {quoteError !== undefined && <Typography variant='body2' color='error'>{quoteError}</Typography>}
              </Box>
              <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} useFlexGap>
                <Button variant='contained' onClick={() => { void askToPay('zfb') }}>{t('topup.alipay')}</Button>
                <Button variant='contained' color='success' onClick={() => { void askToPay('wx') }}>{t('topup.wechat')}</Button>
              </Stack>
            </Stack>
            )}
      </Card>
      )}

      <StripeCard />

      <CreemCard />

      <Dialog open={confirm !== undefined} onClose={() => { if (!paying) setConfirm(undefined) }} fullWidth maxWidth='xs'>
        <DialogTitle>{t('topup.confirmTitle')}</DialogTitle>
        <DialogContent>
          {confirm !== undefined && (
            <Stack spacing={1.5}>
              <Figure label={t('topup.confirmAmount')} value={`$${confirm.amount}`} testId='confirm-amount' />
              <Figure label={t('topup.confirmPayable')} value={t('topup.payableSum', { sum: confirm.sum })} testId='confirm-payable' />
              <Figure label={t('topup.confirmMethod')} value={methodName(confirm.method)} />
              <Alert severity='info'>{t('topup.confirmHint')}</Alert>
            </Stack>
          )}
        </DialogContent>
        <DialogActions>
          <Button onClick={() => { setConfirm(undefined) }} disabled={paying}>{t('common.cancel')}</Button>
          <Button variant='contained' onClick={() => { void pay() }} disabled={paying}>{t('topup.pay')}</Button>
        </DialogActions>
      </Dialog>
    </Stack>
  )
}
