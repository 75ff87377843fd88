import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogContentText from '@mui/material/DialogContentText'
import DialogTitle from '@mui/material/DialogTitle'
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
import { Link as RouterLink, useLocation, useNavigate, useSearchParams } from 'react-router-dom'
import { useStatus } from '../../api/useStatus'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { login } from './api'
import { AuthCard } from './AuthCard'
import { hasOAuth, OAuthButtons } from './OAuthButtons'
import { useTurnstile } from './Turnstile'
import { afterLogin, useFinishSignIn } from './useFinishSignIn'

/**
 * /login: username (or email) and password, the other sign-in methods /api/status enables, and
 * the warning when the super administrator still uses the default password.
 */
export default function LoginPage () {
  const { t } = useTranslation()
  const { status } = useStatus()
  const { user, signIn } = useAuth()
  const notify = useNotify()
  const navigate = useNavigate()
  const location = useLocation()
  const [params] = useSearchParams()
  const finishSignIn = useFinishSignIn()
  const turnstile = useTurnstile()
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [showPassword, setShowPassword] = useState(false)
  const [busy, setBusy] = useState(false)
  const [defaultPassword, setDefaultPassword] = useState(false)

  const passwordLogin = status?.password_login !== false
  const others = hasOAuth(status)

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
    login(username.trim(), password, turnstile.spend()).then(({ user }) => {
      if (user.password_is_default) {
        // The warning must be read before the console opens, so the user stays here until it is closed.
        signIn(user)
        setDefaultPassword(true)
        return
      }
      finishSignIn(user)
    }, (err: unknown) => { notify.error(err) }).finally(() => { setBusy(false) })
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
        : <Alert severity='info'>{others ? t('auth.login.passwordOff') : t('auth.login.noMethod')}</Alert>}
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
          <OAuthButtons onSignedIn={finishSignIn} />
        </>
      )}
      <Dialog open={defaultPassword} aria-labelledby='default-password-title'>
        <DialogTitle id='default-password-title'>{t('auth.defaultPassword.title')}</DialogTitle>
        <DialogContent>
          <DialogContentText>{t('auth.defaultPassword.body')}</DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => { setDefaultPassword(false); navigate(afterLogin(location.state), { replace: true }) }}>{t('auth.defaultPassword.later')}</Button>
          <Button variant='contained' component={RouterLink} to='/setting' replace onClick={() => { setDefaultPassword(false) }}>{t('auth.defaultPassword.change')}</Button>
        </DialogActions>
      </Dialog>
    </AuthCard>
  )
}
