import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Link from '@mui/material/Link'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link as RouterLink, useNavigate, useSearchParams } from 'react-router-dom'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { AFF_KEY, register, sendVerificationCode, storedAff } from './api'
import { AuthCard } from './AuthCard'
import { useTurnstile } from './Turnstile'
import { useCountdown } from './useCountdown'

const USERNAME_MAX = 12
const PASSWORD_MIN = 8
const PASSWORD_MAX = 20

/**
 * /register: username, password twice, email and its code when email verification is on, and
 * the invite code of a `?aff=` link (kept in localStorage until an account is made).
 */
export default function RegisterPage () {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const navigate = useNavigate()
  const [params] = useSearchParams()
  const turnstile = useTurnstile()
  const countdown = useCountdown()
  const [form, setForm] = useState({ username: '', password: '', password2: '', email: '', code: '' })
  const [busy, setBusy] = useState(false)
  const [sending, setSending] = useState(false)
  const [aff, setAff] = useState(storedAff)

  const affParam = params.get('aff')
  useEffect(() => {
    // Kept past this page: the invitee may first look around, or register through OAuth.
    if (affParam !== null && affParam.trim() !== '') {
      localStorage.setItem(AFF_KEY, affParam.trim())
      setAff(affParam.trim())
    }
  }, [affParam])

  const emailVerification = status?.email_verification === true
  // The status may be a cached copy: the form stays usable and the server's answer has the last word.
  const closed = status?.register_enabled === false || status?.password_register === false
  const set = (field: keyof typeof form) => (e: { target: { value: string } }) => { setForm({ ...form, [field]: e.target.value }) }

  const sendCode = () => {
    if (form.email.trim() === '') {
      notify.error(t('auth.enterEmail'))
      return
    }
    if (turnstile.missing) {
      notify.error(t('auth.turnstileWait'))
      return
    }
    setSending(true)
    sendVerificationCode(form.email.trim(), turnstile.spend()).then(() => {
      notify.success(t('auth.register.codeSent'))
      countdown.start()
    }, (err: unknown) => { notify.error(err) }).finally(() => { setSending(false) })
  }

  const submit = (e: FormEvent) => {
    e.preventDefault()
    const problem = form.username === '' || form.password === ''
      ? t('auth.register.required')
      : form.username.length > USERNAME_MAX
        ? t('auth.register.usernameLong')
        : form.password.length < PASSWORD_MIN
          ? t('auth.register.passwordShort')
          : form.password.length > PASSWORD_MAX
            ? t('auth.register.passwordLong')
            : form.password !== form.password2
              ? t('auth.register.passwordsDiffer')
              : emailVerification && form.email.trim() === ''
                ? t('auth.enterEmail')
                : emailVerification && form.code.trim() === ''
                  ? t('auth.register.enterCode')
                  : turnstile.missing ? t('auth.turnstileWait') : undefined
    if (problem !== undefined) {
      notify.error(problem)
      return
    }
    setBusy(true)
    register({
      username: form.username,
      password: form.password,
      password2: form.password2,
      ...(emailVerification ? { email: form.email.trim(), verification_code: form.code.trim() } : {}),
      ...(aff !== '' ? { aff_code: aff } : {})
    }, turnstile.spend()).then(() => {
      localStorage.removeItem(AFF_KEY)
      notify.success(t('auth.register.done'))
      navigate('/login')
    }, (err: unknown) => { notify.error(err) }).finally(() => { setBusy(false) })
  }

  return (
    <AuthCard title={t('auth.register.title')}>
      {closed && <Alert severity='warning' sx={{ mb: 2 }}>{t('auth.register.closed')}</Alert>}
      <Box component='form' onSubmit={submit} noValidate>
        <Stack spacing={2}>
          <TextField
            label={t('auth.register.username')}
            name='username'
            autoComplete='username'
            helperText={t('auth.register.usernameHelp')}
            value={form.username}
            onChange={set('username')}
            required
            autoFocus
            fullWidth
            slotProps={{ htmlInput: { maxLength: USERNAME_MAX } }}
          />
          <TextField
            label={t('auth.register.password')}
            name='password'
            type='password'
            autoComplete='new-password'
            placeholder={t('auth.register.passwordHelp')}
            value={form.password}
            onChange={set('password')}
            required
            fullWidth
            slotProps={{ htmlInput: { maxLength: PASSWORD_MAX } }}
          />
          <TextField
            label={t('auth.register.confirm')}
            name='password2'
            type='password'
            autoComplete='new-password'
            value={form.password2}
            onChange={set('password2')}
            required
            fullWidth
            slotProps={{ htmlInput: { maxLength: PASSWORD_MAX } }}
          />
          {emailVerification && (
            <>
              <Stack direction='row' spacing={1} sx={{ alignItems: 'flex-start' }}>
                <TextField
                  label={t('auth.email')}
                  name='email'
                  type='email'
                  autoComplete='email'
                  value={form.email}
                  onChange={set('email')}
                  required
                  fullWidth
                />
                <Button variant='outlined' onClick={sendCode} disabled={sending || countdown.left > 0} sx={{ flexShrink: 0, height: 56, minWidth: 112 }}>
                  {countdown.left > 0 ? t('auth.resend', { seconds: countdown.left }) : t('auth.register.getCode')}
                </Button>
              </Stack>
              <TextField
                label={t('auth.register.code')}
                name='verification_code'
                autoComplete='one-time-code'
                value={form.code}
                onChange={set('code')}
                required
                fullWidth
              />
            </>
          )}
          {turnstile.widget}
          {aff !== '' && <Typography variant='body2' color='text.secondary'>{t('auth.register.invited', { code: aff })}</Typography>}
          <Button type='submit' variant='contained' size='large' disabled={busy} fullWidth>{t('auth.register.submit')}</Button>
        </Stack>
      </Box>
      <Typography variant='body2' sx={{ mt: 2 }}>
        {t('auth.register.haveAccount')} <Link component={RouterLink} to='/login'>{t('auth.register.login')}</Link>
      </Typography>
    </AuthCard>
  )
}
