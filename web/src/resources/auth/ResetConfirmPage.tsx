import Alert from '@mui/material/Alert'
import Button from '@mui/material/Button'
import IconButton from '@mui/material/IconButton'
import InputAdornment from '@mui/material/InputAdornment'
import Link from '@mui/material/Link'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link as RouterLink, useSearchParams } from 'react-router-dom'
import { useNotify } from '../../components/Notify'
import { confirmReset } from './api'
import { AuthCard } from './AuthCard'

/**
 * /user/reset?email&token, the link of the reset mail. The token is spent only when the user
 * presses the button, not on load: mail scanners that open links must not burn it.
 */
export default function ResetConfirmPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const [params] = useSearchParams()
  const email = params.get('email') ?? ''
  const token = params.get('token') ?? ''
  const [busy, setBusy] = useState(false)
  const [password, setPassword] = useState<string | undefined>()

  const submit = () => {
    setBusy(true)
    confirmReset(email, token).then(setPassword, (err: unknown) => { notify.error(err) }).finally(() => { setBusy(false) })
  }

  if (email === '' || token === '') {
    return (
      <AuthCard title={t('auth.resetConfirm.title')}>
        <Alert severity='error' sx={{ mb: 2 }}>{t('auth.resetConfirm.invalid')}</Alert>
        <Button variant='contained' component={RouterLink} to='/reset'>{t('auth.resetConfirm.again')}</Button>
      </AuthCard>
    )
  }

  return (
    <AuthCard title={t('auth.resetConfirm.title')}>
      <Stack spacing={2}>
        <TextField label={t('auth.email')} value={email} fullWidth slotProps={{ htmlInput: { readOnly: true } }} />
        {password === undefined
          ? (
            <>
              <Typography variant='body2' color='text.secondary'>{t('auth.resetConfirm.intro')}</Typography>
              <Button variant='contained' size='large' onClick={submit} disabled={busy} fullWidth>{t('auth.resetConfirm.submit')}</Button>
            </>
            )
          : (
            <>
              <Alert severity='success'>{t('auth.resetConfirm.done')}</Alert>
              <TextField
                label={t('auth.resetConfirm.newPassword')}
                value={password}
                fullWidth
                onFocus={(e) => { e.target.select() }}
                slotProps={{
                  htmlInput: { readOnly: true, 'data-testid': 'new-password' },
                  input: {
                    endAdornment: (
                      <InputAdornment position='end'>
                        <IconButton aria-label={t('auth.resetConfirm.copy')} edge='end' onClick={() => { void notify.copy(password, t('auth.resetConfirm.copied')) }}>
                          <ContentCopyIcon />
                        </IconButton>
                      </InputAdornment>
                    )
                  }
                }}
              />
              <Button variant='contained' component={RouterLink} to='/login'>{t('auth.login.submit')}</Button>
            </>
            )}
      </Stack>
      {password === undefined && (
        <Typography variant='body2' sx={{ mt: 2 }}>
          <Link component={RouterLink} to='/login'>{t('auth.backToLogin')}</Link>
        </Typography>
      )}
    </AuthCard>
  )
}
