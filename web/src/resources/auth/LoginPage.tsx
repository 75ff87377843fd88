import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Divider from '@mui/material/Divider'
import IconButton from '@mui/material/IconButton'
import InputAdornment from '@mui/material/InputAdornment'
import Link from '@mui/material/Link'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import VisibilityIcon from '@mui/icons-material/Visibility'
import VisibilityOffIcon from '@mui/icons-material/VisibilityOff'
import { type FormEvent, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link as RouterLink, useLocation, useSearchParams } from 'react-router-dom'
import { useStatus } from '../../api/useStatus'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { PasskeyLoginButton } from '../passkey/PasskeyLoginButton'
import { isSecondStep } from '../two-factor/api'
import { LoginSecondStep } from '../two-factor/LoginSecondStep'
import { login } from './api'
import { AuthCard } from './AuthCard'
import { hasOAuth, OAuthButtons } from './OAuthButtons'
import { useTurnstile } from './Turnstile'
import { useFinishSignIn } from './useFinishSignIn'

/**
 * /login: username (or email) and password, and the other sign-in methods /api/status enables.
 * A super administrator still on the default password is warned on arriving in the console.
 */
export default function LoginPage () {
  const { t } = useTranslation()
  const { status } = useStatus()
  const { user } = useAuth()
  const notify = useNotify()
  const [params] = useSearchParams()
  const location = useLocation()
  const finishSignIn = useFinishSignIn()
  // An account with 2FA: the flow token of the second step (from the password, or from an OAuth callback).
  const [flowToken, setFlowToken] = useState<string | undefined>(() => {
    const token = (location.state as { flowToken?: unknown } | null)?.flowToken
    return typeof token === 'string' ? token : undefined
  })
  const turnstile = useTurnstile()
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [showPassword, setShowPassword] = useState(false)
  const [busy, setBusy] = useState(false)

  const passwordLogin = status?.password_login !== false
  const others = hasOAuth(status)
  const passkeyLogin = status?.passkey_login === true

  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (username.trim() === '' || password === '') {
      notify.error(t('auth.login.enterCredentials'))
      return
    }
    if (turnstile.missing) {
      notify.error(t('auth.turnstileWait'))
      return
    }
    setBusy(true)
    login(username.trim(), password, turnstile.spend()).then((answer) => {
      if ('flowToken' in answer) setFlowToken(answer.flowToken)
      else finishSignIn(answer.user)
    }, (err: unknown) => { notify.error(err) }).finally(() => { setBusy(false) })
  }

  if (flowToken !== undefined) {
    return (
      <AuthCard title={t('auth.login.title')}>
        <LoginSecondStep flowToken={flowToken} onSignedIn={finishSignIn} onBack={() => { setFlowToken(undefined); setPassword('') }} />
      </AuthCard>
    )
  }

  return (
    <AuthCard title={t('auth.login.title')}>
      {params.get('expired') === 'true' && user === undefined && <Alert severity='warning' sx={{ mb: 2 }}>{t('error.expired')}</Alert>}
      {passwordLogin
        ? (
          <Box component='form' onSubmit={submit} noValidate>
            <Stack spacing={2}>
              <TextField
                label={t('auth.login.username')}
                name='username'
                autoComplete='username'
                value={username}
                onChange={(e) => { setUsername(e.target.value) }}
                required
                autoFocus
                fullWidth
              />
              <TextField
                label={t('auth.login.password')}
                name='password'
                type={showPassword ? 'text' : 'password'}
                autoComplete='current-password'
                value={password}
                onChange={(e) => { setPassword(e.target.value) }}
                required
                fullWidth
                slotProps={{
                  input: {
                    endAdornment: (
                      <InputAdornment position='end'>
                        <IconButton aria-label={t('auth.login.showPassword')} edge='end' onClick={() => { setShowPassword(!showPassword) }}>
                          {showPassword ? <VisibilityOffIcon /> : <VisibilityIcon />}
                        </IconButton>
                      </InputAdornment>
                    )
                  }
                }}
              />
              {turnstile.widget}
              <Button type='submit' variant='contained' size='large' disabled={busy} fullWidth>{t('auth.login.submit')}</Button>
            </Stack>
          </Box>
          )
        : <Alert severity='info'>{others || passkeyLogin ? t('auth.login.passwordOff') : t('auth.login.noMethod')}</Alert>}
      {passkeyLogin && <Box sx={{ mt: 2 }}><PasskeyLoginButton onSignedIn={finishSignIn} /></Box>}
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={{ xs: 0.5, sm: 2 }} sx={{ mt: 2, justifyContent: 'space-between' }}>
        <Typography variant='body2'>
          {t('auth.login.forgot')} <Link component={RouterLink} to='/reset'>{t('auth.login.reset')}</Link>
        </Typography>
        {status?.register_enabled !== false && (
          <Typography variant='body2'>
            {t('auth.login.noAccount')} <Link component={RouterLink} to='/register'>{t('auth.login.register')}</Link>
          </Typography>
        )}
      </Stack>
      {others && (
        <>
          <Divider sx={{ mt: 3 }}><Typography variant='body2' color='text.secondary'>{t('auth.login.others')}</Typography></Divider>
          <OAuthButtons onSignedIn={(answer) => { if (isSecondStep(answer)) setFlowToken(answer.flow_token); else finishSignIn(answer) }} />
        </>
      )}
    </AuthCard>
  )
}
