import type { CreemProductView, CreemStatusFields, StatusData } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { post } from '../../api/client'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { renderQuota } from '../../lib/format'
import { Figure } from './Figure'

/** The status object with what `/api/status` says about Creem (enable_creem_topup, creem_products). */
type CreemStatus = StatusData & Partial<CreemStatusFields>

/** Whether the wallet offers Creem: configured, with at least one product on sale. */
export function creemEnabled (status: StatusData | undefined): boolean {
  const s = status as CreemStatus | undefined
  return s?.enable_creem_topup === true && (s.creem_products?.length ?? 0) > 0
}

/** Creates the order and its Creem checkout; answers the page to send the browser to. */
async function startCreemPayment (productId: string): Promise<string> {
  return (await post<{ checkout_url: string }>('/api/user/creem/pay', { product_id: productId, payment_method: 'creem' })).checkout_url
}

/** Currencies counted in whole units (no minor unit). */
const ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'])

/** A sum in its currency's major unit, with the currency's usual decimals (4.99, 20.00, 500). */
function priceText (p: CreemProductView): string {
  return p.price.toFixed(ZERO_DECIMAL.has(p.currency.toUpperCase()) ? 0 : 2)
}

/** Top-up packages sold through Creem: one button each, paid on Creem's page. Shown only when Creem is configured. */
export function CreemCard () {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const [confirm, setConfirm] = useState<CreemProductView | undefined>()
  const [busy, setBusy] = useState(false)
  // Creem sends the browser back here with the outcome in the query string.
  const returned = new URLSearchParams(window.location.search).get('creem') === 'success'

  if (!creemEnabled(status)) return null
  const products = (status as CreemStatus).creem_products ?? []
  const price = (p: CreemProductView) => t('creem.price', { price: priceText(p), currency: p.currency.toUpperCase() })

  const pay = async () => {
    if (confirm === undefined) return
    setBusy(true)
    try {
      window.location.assign(await startCreemPayment(confirm.product_id))
    } catch (err) {
      notify.error(err)
      setBusy(false)
    }
  }

  return (
    <Paper component='section' aria-label={t('creem.title')} data-testid='creem-card' sx={{ p: { xs: 2, sm: 3 } }}>
      <Typography variant='h6' component='h2' gutterBottom>{t('creem.title')}</Typography>
      <Stack spacing={2}>
        {returned && <Alert severity='success'>{t('creem.returned')}</Alert>}
        <Typography variant='body2' color='text.secondary'>{t('creem.help')}</Typography>
        <Box sx={{ display: 'grid', gap: 1, gridTemplateColumns: { xs: '1fr', sm: 'repeat(auto-fill, minmax(200px, 1fr))' } }}>
          {products.map((p) => (
            <Button
              key={p.product_id}
              variant='outlined'
              onClick={() => { setConfirm(p) }}
              disabled={busy}
              data-testid={`creem-product-${p.product_id}`}
              sx={{ flexDirection: 'column', alignItems: 'flex-start', textAlign: 'left', textTransform: 'none', py: 1.5, minWidth: 0 }}
            >
              <Typography variant='subtitle1' component='span' sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>{p.name}</Typography>
              <Typography variant='h6' component='span'>{price(p)}</Typography>
              <Typography variant='body2' component='span' color='text.secondary'>{t('creem.credits', { quota: renderQuota(p.quota, status) })}</Typography>
            </Button>
          ))}
        </Box>
      </Stack>

      <Dialog open={confirm !== undefined} onClose={() => { if (!busy) setConfirm(undefined) }} fullWidth maxWidth='xs'>
        <DialogTitle>{t('creem.confirmTitle')}</DialogTitle>
        <DialogContent>
          {confirm !== undefined && (
            <Stack spacing={1.5}>
              <Figure label={t('creem.product')} value={confirm.name} />
              <Figure label={t('creem.payable')} value={price(confirm)} testId='creem-confirm-payable' />
              <Figure label={t('creem.quota')} value={renderQuota(confirm.quota, status)} testId='creem-confirm-quota' />
              <Figure label={t('creem.method')} value={t('creem.methodName')} />
              <Alert severity='info'>{t('creem.hint')}</Alert>
            </Stack>
          )}
        </DialogContent>
        <DialogActions>
          <Button onClick={() => { setConfirm(undefined) }} disabled={busy}>{t('common.cancel')}</Button>
          <Button variant='contained' onClick={() => { void pay() }} disabled={busy}>{t('creem.pay')}</Button>
        </DialogActions>
      </Dialog>
    </Paper>
  )
}
