import type { SetupStatus } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNavigate } from 'react-router-dom'
import { useNotify } from '../../components/Notify'
import { AuthCard } from '../auth/AuthCard'
import { completeSetup, getSetup } from './api'

const USERNAME_MAX = 12
const PASSWORD_MIN = 8
const PASSWORD_MAX = 20

/** /setup: the first run's form for the super admin; once an account exists it leads to /login. */
export default function SetupPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const navigate = useNavigate()
  const [setup, setSetup] = useState<SetupStatus | undefined>()
  const [form, setForm] = useState({ username: '', password: '', confirm: '' })
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    let live = true
    getSetup().then((s) => {
      if (!live) return
      if (s.status) navigate('/login', { replace: true })
      else setSetup(s)
    }, (err: unknown) => { if (live) notify.error(err) })
    return () => { live = false }
  }, [navigate, notify])

  const set = (field: keyof typeof form) => (e: { target: { value: string } }) => { setForm({ ...form, [field]: e.target.value }) }

  const submit = (e: FormEvent) => {
    e.preventDefault()
    const password = [...form.password].length
    const problem = form.username === '' || form.password === ''
      ? t('setup.required')
      : [...form.username].length > USERNAME_MAX
          ? t('setup.usernameLong')
          : password < PASSWORD_MIN || password > PASSWORD_MAX
            ? t('setup.passwordLength')
            : form.password !== form.confirm ? t('setup.passwordsDiffer') : undefined
    if (problem !== undefined) {
      notify.error(problem)
      return
    }
    setBusy(true)
    completeSetup({ username: form.username, password: form.password, confirmPassword: form.confirm }).then(() => {
      notify.success(t('setup.done'))
      navigate('/login', { replace: true })
    }, (err: unknown) => {
      notify.error(err)
      // Someone else finished setup meanwhile: the form is no longer needed.
      getSetup().then((s) => { if (s.status) navigate('/login', { replace: true }) }, () => {})
    }).finally(() => { setBusy(false) })
  }

  return (
    <AuthCard title={t('setup.title')}>
      <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>{t('setup.intro')}</Typography>
      <Box component='form' onSubmit={submit} noValidate aria-label={t('setup.title')}>
        <Stack spacing={2}>
          <TextField
            label={t('setup.username')}
            name='username'
            autoComplete='username'
            helperText={t('setup.usernameHelp')}
            value={form.username}
            onChange={set('username')}
            required
            autoFocus
            fullWidth
            slotProps={{ htmlInput: { maxLength: USERNAME_MAX } }}
          />
          <TextField
            label={t('setup.password')}
            name='password'
            type='password'
            autoComplete='new-password'
            helperText={t('setup.passwordHelp')}
            value={form.password}
            onChange={set('password')}
            required
            fullWidth
            slotProps={{ htmlInput: { maxLength: PASSWORD_MAX } }}
          />
          <TextField
            label={t('setup.confirm')}
            name='confirmPassword'
            type='password'
            autoComplete='new-password'
            value={form.confirm}
            onChange={set('confirm')}
            required
            fullWidth
            slotProps={{ htmlInput: { maxLength: PASSWORD_MAX } }}
          />
          <Button type='submit' variant='contained' size='large' disabled={busy}>{t('setup.submit')}</Button>
          {setup !== undefined && (
            <Typography variant='caption' color='text.secondary'>{t('setup.database', { type: 'PostgreSQL' })}</Typography>
          )}
        </Stack>
      </Box>
    </AuthCard>
  )
}
