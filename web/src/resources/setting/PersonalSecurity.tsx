import type { UserView } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import IconButton from '@mui/material/IconButton'
import InputAdornment from '@mui/material/InputAdornment'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import { type FormEvent, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNavigate } from 'react-router-dom'
import { get, requestEnvelope } from '../../api/client'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { useVerification } from '../../components/VerifyDialog'
import { useAction } from '../../lib/useAction'
import { PersonalCard } from './PersonalCard'

/** Password length limits (docs/domain.md). */
const PASSWORD_MIN = 8
const PASSWORD_MAX = 20

/** Generates a new personal access token (the old one stops working), shows it and copies it. */
export function PersonalAccessToken ({ self }: { self: UserView }) {
  const { t } = useTranslation()
  const notify = useNotify()
  const [token, setToken] = useState<string | undefined>()
  const { act, busy } = useAction()
  const generate = async () => {
    await act(async () => {
      const value = await get<string>('/api/user/token')
      setToken(value)
      await notify.copy(value, t('setting.personal.token.resetCopied'))
    })
  }
  return (
    <PersonalCard title={t('setting.personal.token.title')} testId='personal-token'>
      <Typography variant='body2' color='text.secondary' sx={{ mb: 2, overflowWrap: 'anywhere' }}>
        {t('setting.personal.token.help', { id: self.id })}
      </Typography>
      {token !== undefined && (
        <TextField
          label={t('setting.personal.token.value')}
          value={token}
          fullWidth
          size='small'
          sx={{ mb: 2 }}
          onFocus={(e) => { e.target.select() }}
          slotProps={{
            htmlInput: { readOnly: true, 'data-testid': 'access-token' },
            input: {
              endAdornment: (
                <InputAdornment position='end'>
                  <IconButton aria-label={t('common.copy')} edge='end' onClick={() => { void notify.copy(token) }}><ContentCopyIcon fontSize='small' /></IconButton>
                </InputAdornment>
              )
            }
          }}
        />
      )}
      <Button variant='contained' onClick={() => { void generate() }} disabled={busy}>{t('setting.personal.token.generate')}</Button>
    </PersonalCard>
  )
}

/** Current password (when the account has one), new password and its confirmation. */
export function PersonalPassword () {
  const { t } = useTranslation()
  const { signIn } = useAuth()
  const notify = useNotify()
  const { withVerification } = useVerification()
  const [original, setOriginal] = useState('')
  const [password, setPassword] = useState('')
  const [confirm, setConfirm] = useState('')
  const { act, busy } = useAction()
  const lengthWrong = password !== '' && (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)
  const mismatch = confirm !== '' && confirm !== password

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) { notify.warning(t('setting.personal.password.length')); return }
    if (password !== confirm) { notify.warning(t('setting.personal.password.mismatch')); return }
    await act(async () => {
      // The server starts a fresh session for this browser; other sessions end.
      // A fresh secure verification is needed; the dialog asks for it when due, then the change is sent again.
      const res = await withVerification(async () => await requestEnvelope<UserView>('PUT', '/api/user/self', { body: { password, original_password: original } }))
      // The answer no longer carries password_is_default: the default-password banner goes away.
      if (res.data !== undefined) signIn(res.data)
      notify.success(res.message !== '' ? res.message : t('setting.personal.password.changed'))
      setOriginal('')
      setPassword('')
      setConfirm('')
    })
  }
  return (
    <PersonalCard title={t('setting.personal.password.title')} testId='personal-password'>
      <Stack component='form' onSubmit={(e) => { void submit(e) }} sx={{ gap: 2 }}>
        <TextField
          label={t('setting.personal.password.original')}
          type='password'
          size='small'
          value={original}
          onChange={(e) => { setOriginal(e.target.value) }}
          helperText={t('setting.personal.password.originalHelp')}
          slotProps={{ htmlInput: { autoComplete: 'current-password', maxLength: 128 } }}
        />
        <TextField
          label={t('setting.personal.password.new')}
          type='password'
          size='small'
          required
          value={password}
          placeholder={t('setting.personal.password.placeholder')}
          onChange={(e) => { setPassword(e.target.value) }}
          error={lengthWrong}
          helperText={lengthWrong ? t('setting.personal.password.length') : undefined}
          slotProps={{ htmlInput: { autoComplete: 'new-password', maxLength: PASSWORD_MAX } }}
        />
        <TextField
          label={t('setting.personal.password.confirm')}
          type='password'
          size='small'
          required
          value={confirm}
          onChange={(e) => { setConfirm(e.target.value) }}
          error={mismatch}
          helperText={mismatch ? t('setting.personal.password.mismatch') : undefined}
          slotProps={{ htmlInput: { autoComplete: 'new-password', maxLength: PASSWORD_MAX } }}
        />
        <Button type='submit' variant='contained' disabled={busy} sx={{ alignSelf: 'flex-start' }}>{t('setting.personal.password.submit')}</Button>
      </Stack>
    </PersonalCard>
  )
}

/** Deleting the account: the user types their own username, then is signed out. */
export function PersonalDelete ({ self }: { self: UserView }) {
  const { t } = useTranslation()
  const notify = useNotify()
  const { signOut } = useAuth()
  const navigate = useNavigate()
  const [open, setOpen] = useState(false)
  const [typed, setTyped] = useState('')
  const [busy, setBusy] = useState(false)

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    if (typed.trim() !== self.username) { notify.warning(t('setting.personal.delete.mismatch')); return }
    setBusy(true)
    try {
      const res = await requestEnvelope<null>('DELETE', '/api/user/self')
      notify.success(res.message !== '' ? res.message : t('setting.personal.delete.deleted'))
      await signOut()
      navigate('/login')
    } catch (err) {
      notify.error(err)
      setBusy(false)
    }
  }
  return (
    <PersonalCard title={t('setting.personal.delete.title')} testId='personal-delete'>
      <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>{t('setting.personal.delete.help')}</Typography>
      <Button color='error' variant='outlined' onClick={() => { setTyped(''); setOpen(true) }}>{t('setting.personal.delete.button')}</Button>
      <Dialog open={open} onClose={() => { setOpen(false) }} fullWidth maxWidth='xs' slotProps={{ paper: { component: 'form', onSubmit: (e: FormEvent) => { void submit(e) } } }}>
        <DialogTitle>{t('setting.personal.delete.dialogTitle')}</DialogTitle>
        <DialogContent>
          <Alert severity='warning' sx={{ mb: 2, overflowWrap: 'anywhere' }}>{t('setting.personal.delete.warning', { username: self.username })}</Alert>
          <TextField
            label={t('setting.personal.delete.typeUsername')}
            value={typed}
            onChange={(e) => { setTyped(e.target.value) }}
            fullWidth
            autoFocus
            slotProps={{ htmlInput: { autoComplete: 'off' } }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => { setOpen(false) }}>{t('common.cancel')}</Button>
          <Button type='submit' color='error' variant='contained' disabled={busy}>{t('setting.personal.delete.confirm')}</Button>
        </DialogActions>
      </Dialog>
    </PersonalCard>
  )
}
