import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Link from '@mui/material/Link'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import { type FormEvent, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link as RouterLink } from 'react-router-dom'
import { useNotify } from '../../components/Notify'
import { sendResetMail } from './api'
import { AuthCard } from './AuthCard'
import { useTurnstile } from './Turnstile'
import { useCountdown } from './useCountdown'

/** /reset: mails a password-reset link; the button then waits 30 s before it may send another. */
export default function ResetPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const turnstile = useTurnstile()
  const countdown = useCountdown()
  const [email, setEmail] = useState('')
  const [busy, setBusy] = useState(false)

  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (email.trim() === '') {
      notify.error(t('auth.enterEmail'))
      return
    }
    if (turnstile.missing) {
      notify.error(t('auth.turnstileWait'))
      return
    }
    setBusy(true)
    sendResetMail(email.trim(), turnstile.spend()).then(() => {
      notify.success(t('auth.reset.sent'))
      countdown.start()
    }, (err: unknown) => { notify.error(err) }).finally(() => { setBusy(false) })
  }

  return (
    <AuthCard title={t('auth.reset.title')}>
      <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>{t('auth.reset.intro')}</Typography>
      <Box component='form' onSubmit={submit} noValidate>
        <Stack spacing={2}>
          <TextField
            label={t('auth.email')}
            name='email'
            type='email'
            autoComplete='email'
            value={email}
            onChange={(e) => { setEmail(e.target.value) }}
            required
            autoFocus
            fullWidth
          />
          {turnstile.widget}
          <Button type='submit' variant='contained' size='large' disabled={busy || countdown.left > 0} fullWidth>
            {countdown.left > 0 ? t('auth.resend', { seconds: countdown.left }) : t('auth.reset.send')}
          </Button>
        </Stack>
      </Box>
      <Typography variant='body2' sx={{ mt: 2 }}>
        <Link component={RouterLink} to='/login'>{t('auth.backToLogin')}</Link>
      </Typography>
    </AuthCard>
  )
}
