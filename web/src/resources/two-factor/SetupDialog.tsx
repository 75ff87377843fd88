import type { TwoFactorSetup } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import CircularProgress from '@mui/material/CircularProgress'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import IconButton from '@mui/material/IconButton'
import InputAdornment from '@mui/material/InputAdornment'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import useMediaQuery from '@mui/material/useMediaQuery'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import QRCode from 'qrcode'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'
import { enableTwoFactor } from './api'
import { BackupCodes } from './BackupCodes'

/** The otpauth:// URI as a QR code image, drawn here (no third-party service sees the secret). */
function QrImage ({ data }: { data: string }) {
  const { t } = useTranslation()
  const [src, setSrc] = useState<string | undefined>()
  useEffect(() => {
    let live = true
    QRCode.toDataURL(data, { width: 200, margin: 1, errorCorrectionLevel: 'M' }).then((url) => { if (live) setSrc(url) }, () => { if (live) setSrc(undefined) })
    return () => { live = false }
  }, [data])
  if (src === undefined) return <CircularProgress />
  return <Box component='img' src={src} alt={t('twoFactor.setup.qrAlt')} data-testid='two-factor-qr' sx={{ display: 'block', width: 200, height: 200, maxWidth: '100%', bgcolor: '#fff', borderRadius: 1 }} />
}

/**
 * The setup of POST /api/user/2fa/setup: QR code and key for the app, the ten backup codes
 * (shown once), then a code from the app to enable it.
 */
export function SetupDialog ({ setup, onClose, onEnabled }: { setup: TwoFactorSetup | undefined, onClose: () => void, onEnabled: () => void }) {
  const { t } = useTranslation()
  const notify = useNotify()
  const small = useMediaQuery('(max-width:600px)')
  const [code, setCode] = useState('')
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  useEffect(() => { setCode(''); setError(undefined) }, [setup])

  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (code.trim() === '') { setError(t('twoFactor.code.required')); return }
    setBusy(true)
    enableTwoFactor(code.trim()).then(() => {
      setBusy(false)
      notify.success(t('twoFactor.setup.enabled'))
      onEnabled()
    }, (err: unknown) => {
      setBusy(false)
      setError(err instanceof Error ? err.message : String(err))
    })
  }

  return (
    <Dialog open={setup !== undefined} onClose={onClose} fullWidth maxWidth='sm' fullScreen={small} aria-labelledby='two-factor-setup-title'>
      <Box component='form' onSubmit={submit} noValidate sx={{ display: 'flex', flexDirection: 'column', minHeight: small ? '100%' : undefined }}>
        <DialogTitle id='two-factor-setup-title'>{t('twoFactor.setup.title')}</DialogTitle>
        {setup !== undefined && (
          <DialogContent dividers>
            <Stack spacing={3}>
              <Stack spacing={1.5}>
                <Typography variant='subtitle1' component='h3'>{t('twoFactor.setup.scan')}</Typography>
                <QrImage data={setup.qr_code_data} />
                <Typography variant='body2' color='text.secondary'>{t('twoFactor.setup.manual')}</Typography>
                <TextField
                  label={t('twoFactor.setup.secret')} value={setup.secret} size='small' fullWidth
                  onFocus={(e) => { e.target.select() }}
                  slotProps={{
                    htmlInput: { readOnly: true, 'data-testid': 'two-factor-secret', style: { fontFamily: 'monospace' } },
                    input: {
                      endAdornment: (
                        <InputAdornment position='end'>
                          <IconButton aria-label={t('common.copy')} edge='end' onClick={() => { void notify.copy(setup.secret) }}><ContentCopyIcon fontSize='small' /></IconButton>
                        </InputAdornment>
                      )
                    }
                  }}
                />
              </Stack>
              <Stack spacing={1.5}>
                <Typography variant='subtitle1' component='h3'>{t('twoFactor.setup.backup')}</Typography>
                <Alert severity='warning'>{t('twoFactor.setup.backupHelp')}</Alert>
                <BackupCodes codes={setup.backup_codes} />
              </Stack>
              <Stack spacing={1.5}>
                <Typography variant='subtitle1' component='h3'>{t('twoFactor.setup.confirm')}</Typography>
                <TextField
                  label={t('twoFactor.code.totp')} value={code} fullWidth
                  onChange={(e) => { setCode(e.target.value); setError(undefined) }}
                  error={error !== undefined} helperText={error ?? t('twoFactor.code.totpHelp')}
                  slotProps={{ htmlInput: { inputMode: 'numeric', autoComplete: 'one-time-code', maxLength: 6, 'data-testid': 'two-factor-enable-code' } }}
                />
              </Stack>
            </Stack>
          </DialogContent>
        )}
        <DialogActions sx={{ mt: 'auto' }}>
          <Button onClick={onClose}>{t('twoFactor.setup.cancel')}</Button>
          <Button type='submit' variant='contained' disabled={busy}>{t('twoFactor.setup.enable')}</Button>
        </DialogActions>
      </Box>
    </Dialog>
  )
}
