import type { UserView } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Link from '@mui/material/Link'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import { type FormEvent, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { loginSecondStep } from './api'

/**
 * The second step of a sign-in of an account with 2FA: a code from the authenticator app, or a
 * backup code. Wrong codes count toward the same lockout as wrong passwords.
 */
export function LoginSecondStep ({ flowToken, onSignedIn, onBack }: { flowToken: string, onSignedIn: (user: UserView) => void, onBack: () => void }) {
  const { t } = useTranslation()
  const [backup, setBackup] = useState(false)
  const [code, setCode] = useState('')
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (code.trim() === '') { setError(t('twoFactor.code.required')); return }
    setBusy(true)
    setError(undefined)
    loginSecondStep(code.trim(), flowToken).then(({ user }) => { onSignedIn(user) }, (err: unknown) => {
      setBusy(false)
      setCode('')
      setError(err instanceof Error ? err.message : String(err))
    })
  }
  return (
    <Box component='form' onSubmit={submit} noValidate data-testid='login-2fa'>
      <Stack spacing={2}>
        <Typography variant='h6' component='h2'>{t('twoFactor.login.title')}</Typography>
        <Typography variant='body2' color='text.secondary'>{t(backup ? 'twoFactor.login.promptBackup' : 'twoFactor.login.prompt')}</Typography>
        <TextField
          key={backup ? 'backup' : 'totp'}
          label={t(backup ? 'twoFactor.code.backup' : 'twoFactor.code.totp')}
          name='code' value={code} autoFocus fullWidth required
          onChange={(e) => { setCode(e.target.value); setError(undefined) }}
          helperText={t(backup ? 'twoFactor.code.backupHelp' : 'twoFactor.code.totpHelp')}
          slotProps={{ htmlInput: backup ? { autoComplete: 'off', maxLength: 64, 'data-testid': 'login-2fa-code' } : { inputMode: 'numeric', autoComplete: 'one-time-code', maxLength: 6, 'data-testid': 'login-2fa-code' } }}
        />
        {error !== undefined && <Alert severity='error' role='alert' data-testid='login-2fa-error'>{error}</Alert>}
        <Button type='submit' variant='contained' size='large' disabled={busy} fullWidth>{t('twoFactor.login.submit')}</Button>
        <Stack direction='row' spacing={2} useFlexGap sx={{ justifyContent: 'space-between', flexWrap: 'wrap' }}>
          <Link component='button' type='button' variant='body2' onClick={() => { setBackup(!backup); setCode(''); setError(undefined) }} data-testid='login-2fa-toggle'>
            {t(backup ? 'twoFactor.login.useTotp' : 'twoFactor.login.useBackup')}
          </Link>
          <Link component='button' type='button' variant='body2' onClick={onBack}>{t('twoFactor.login.back')}</Link>
        </Stack>
      </Stack>
    </Box>
  )
}
