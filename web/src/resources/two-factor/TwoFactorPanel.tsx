import type { TwoFactorSetup, TwoFactorStatus } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import CircularProgress from '@mui/material/CircularProgress'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogContentText from '@mui/material/DialogContentText'
import DialogTitle from '@mui/material/DialogTitle'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'
import { useVerification } from '../../components/VerifyDialog'
import { useAction } from '../../lib/useAction'
import { useLoader } from '../../lib/useLoad'
import { disableTwoFactor, regenerateBackupCodes, setupTwoFactor, twoFactorStatus } from './api'
import { BackupCodes } from './BackupCodes'
import { SetupDialog } from './SetupDialog'

/** Asks for a TOTP or backup code, then runs `action` with it; a refusal shows in the dialog. */
function CodeDialog ({ open, title, help, confirm, danger, onClose, action, testId }: {
  open: boolean
  title: string
  help: string
  confirm: string
  danger?: boolean
  onClose: () => void
  action: (code: string) => Promise<void>
  testId: string
}) {
  const { t } = useTranslation()
  const [code, setCode] = useState('')
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  useEffect(() => { if (open) { setCode(''); setError(undefined) } }, [open])
  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (code.trim() === '') { setError(t('twoFactor.code.required')); return }
    setBusy(true)
    action(code.trim()).then(() => { setBusy(false) }, (err: unknown) => {
      setBusy(false)
      setError(err instanceof Error ? err.message : String(err))
    })
  }
  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth='xs' data-testid={testId}>
      <Box component='form' onSubmit={submit} noValidate>
        <DialogTitle>{title}</DialogTitle>
        <DialogContent>
          <DialogContentText sx={{ mb: 2 }}>{help}</DialogContentText>
          <TextField
            label={t('twoFactor.code.either')} value={code} autoFocus fullWidth
            onChange={(e) => { setCode(e.target.value); setError(undefined) }}
            error={error !== undefined} helperText={error}
            slotProps={{ htmlInput: { autoComplete: 'one-time-code', maxLength: 64, 'data-testid': `${testId}-code` } }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type='submit' variant='contained' color={danger === true ? 'error' : 'primary'} disabled={busy}>{confirm}</Button>
        </DialogActions>
      </Box>
    </Dialog>
  )
}

/**
 * The caller's two-factor sign-in: its status, the setup, and (when on) new backup codes and
 * disabling, each confirmed with a code; disabling also asks for a secure verification when the
 * server wants one. `onChange` hears the new status after every change.
 */
export function TwoFactorPanel ({ onChange }: { onChange?: (status: TwoFactorStatus) => void }) {
  const { t } = useTranslation()
  const notify = useNotify()
  const { withVerification } = useVerification()
  const [setup, setSetup] = useState<TwoFactorSetup | undefined>()
  const [dialog, setDialog] = useState<'disable' | 'regenerate' | undefined>()
  const [freshCodes, setFreshCodes] = useState<string[] | undefined>()
  const [status, setStatus] = useState<TwoFactorStatus | undefined>()
  const { reload } = useLoader(twoFactorStatus, (s) => { setStatus(s); onChange?.(s) })
  const { act, busy } = useAction()

  const start = () => {
    void act(async () => { setSetup(await setupTwoFactor()) })
  }
  const disable = async (code: string) => {
    await withVerification(async () => { await disableTwoFactor(code) })
    setDialog(undefined)
    notify.success(t('twoFactor.disable.done'))
    reload()
  }
  const regenerate = async (code: string) => {
    const codes = await regenerateBackupCodes(code)
    setDialog(undefined)
    setFreshCodes(codes)
    notify.success(t('twoFactor.backup.regenerated'))
    reload()
  }

  if (status === undefined) return <CircularProgress size={24} />
  return (
    <Stack spacing={2} data-testid='two-factor-panel'>
      <Typography variant='body2' color='text.secondary'>{t('twoFactor.intro')}</Typography>
      <Stack direction='row' spacing={1} useFlexGap sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
        <Chip
          data-testid='two-factor-status'
          color={status.enabled ? 'success' : status.pending ? 'warning' : 'default'}
          variant={status.enabled ? 'filled' : 'outlined'}
          label={t(status.enabled ? 'twoFactor.status.enabled' : status.pending ? 'twoFactor.status.pending' : 'twoFactor.status.disabled')}
        />
        {status.enabled && <Typography variant='body2' data-testid='backup-remaining'>{t('twoFactor.backupRemaining', { count: status.backup_codes_remaining })}</Typography>}
      </Stack>
      {status.locked && <Alert severity='error'>{t('twoFactor.status.locked')}</Alert>}
      {status.enabled && status.backup_codes_remaining <= 2 && <Alert severity='warning'>{t('twoFactor.backupLow')}</Alert>}
      {freshCodes !== undefined && (
        <Stack spacing={1}>
          <Typography variant='subtitle2'>{t('twoFactor.backup.newCodes')}</Typography>
          <Alert severity='warning'>{t('twoFactor.setup.backupHelp')}</Alert>
          <BackupCodes codes={freshCodes} />
        </Stack>
      )}
      <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
        {!status.enabled && (
          <Button variant='contained' disabled={busy} onClick={start} data-testid='two-factor-setup'>
            {t(status.pending ? 'twoFactor.setup.restart' : 'twoFactor.setup.start')}
          </Button>
        )}
        {status.enabled && (
          <>
            <Button variant='outlined' onClick={() => { setFreshCodes(undefined); setDialog('regenerate') }} data-testid='two-factor-regenerate'>{t('twoFactor.backup.regenerate')}</Button>
            <Button variant='outlined' color='error' onClick={() => { setDialog('disable') }} data-testid='two-factor-disable'>{t('twoFactor.disable.button')}</Button>
          </>
        )}
      </Stack>

      <SetupDialog
        setup={setup}
        onClose={() => { setSetup(undefined); reload() }}
        onEnabled={() => { setSetup(undefined); reload() }}
      />
      <CodeDialog
        open={dialog === 'disable'} testId='two-factor-disable-dialog' danger
        title={t('twoFactor.disable.title')} help={t('twoFactor.disable.help')} confirm={t('twoFactor.disable.confirm')}
        onClose={() => { setDialog(undefined) }} action={disable}
      />
      <CodeDialog
        open={dialog === 'regenerate'} testId='two-factor-regenerate-dialog'
        title={t('twoFactor.backup.regenerateTitle')} help={t('twoFactor.backup.regenerateHelp')} confirm={t('twoFactor.backup.generate')}
        onClose={() => { setDialog(undefined) }} action={regenerate}
      />
    </Stack>
  )
}
