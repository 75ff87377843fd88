import type { UserView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import MenuItem from '@mui/material/MenuItem'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { FormDrawer } from '../../components/FormDrawer'
import { useNotify } from '../../components/Notify'
import { renderQuota } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { useRecord } from '../../lib/useRecord'
import { AdminPasskeySection } from '../passkey/AdminPasskeys'
import { AdminSubscriptionSection } from '../subscription/UserSubscriptions'
import { AdminTwoFactorSection } from '../two-factor/AdminTwoFactor'
import { createUser, getUser, groupNames, updateUser } from './api'
import { type EditErrors, parseInteger, validateEdit } from './rules'

/** The add-user drawer (docs/domain.md: username and password must not be empty). */
export function AddUserDrawer ({ open, onClose, onSaved }: { open: boolean, onClose: () => void, onSaved: () => void }) {
  const { t } = useTranslation()
  const notify = useNotify()
  const [username, setUsername] = useState('')
  const [displayName, setDisplayName] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<{ username?: string, password?: string }>({})
  const { act, busy: saving } = useAction()

  useEffect(() => {
    if (!open) return
    setUsername('')
    setDisplayName('')
    setPassword('')
    setError({})
  }, [open])

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    const found: { username?: string, password?: string } = {}
    if (username.trim() === '') found.username = t('user.form.required')
    if (password === '') found.password = t('user.form.required')
    else if ([...password].length < 8 || [...password].length > 20) found.password = t('user.form.passwordLength')
    setError(found)
    if (Object.keys(found).length > 0) {
      notify.error(found.username ?? found.password)
      return
    }
    await act(async () => {
      await createUser({ username: username.trim(), display_name: displayName.trim(), password })
      notify.success(t('user.created'))
      onSaved()
    })
  }

  return (
    <FormDrawer open={open} title={t('user.form.addTitle')} width={480} onClose={onClose} onSubmit={submit} saving={saving} submitLabel={t('user.form.create')}>
      <TextField
        label={t('user.form.username')} value={username} required autoFocus
        onChange={(e) => { setUsername(e.target.value); setError((x) => ({ ...x, username: undefined })) }}
        error={error.username !== undefined} helperText={error.username}
        slotProps={{ htmlInput: { maxLength: 12, autoComplete: 'off' } }}
      />
      <TextField label={t('user.form.displayName')} value={displayName} onChange={(e) => { setDisplayName(e.target.value) }} slotProps={{ htmlInput: { maxLength: 64 } }} />
      <TextField
        label={t('user.form.password')} type='password' value={password} required
        onChange={(e) => { setPassword(e.target.value); setError((x) => ({ ...x, password: undefined })) }}
        error={error.password !== undefined} helperText={error.password ?? t('user.form.passwordHelp')}
        slotProps={{ htmlInput: { maxLength: 20, autoComplete: 'new-password' } }}
      />
    </FormDrawer>
  )
}

interface EditForm { username: string, displayName: string, password: string, group: string, quota: string, delta: string, concurrency: string }

const formOf = (u: UserView): EditForm => ({
  username: u.username, displayName: u.display_name, password: '', group: u.group, quota: String(u.quota), delta: '', concurrency: String(u.concurrency_limit)
})

/** The edit-user drawer: account fields, group, quota with the add-quota helper, concurrency limit, bindings read only. */
export function EditUserDrawer ({ userId, onClose, onSaved }: { userId: number | undefined, onClose: () => void, onSaved: (user: UserView) => void }) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const [form, setForm] = useState<EditForm>({ username: '', displayName: '', password: '', group: '', quota: '0', delta: '', concurrency: '0' })
  // Read each time the drawer opens.
  const groups = useLoad(userId === undefined ? undefined : groupNames, { initial: [] }).data
  const [errors, setErrors] = useState<EditErrors>({})
  const { act, busy: saving } = useAction()
  const { record: original, loading, waiting } = useRecord(userId !== undefined, userId, getUser, { onLoad: (u) => { setForm(formOf(u)) }, onFail: onClose })

  useEffect(() => { if (userId !== undefined) setErrors({}) }, [userId])

  const set = (key: keyof EditForm, value: string) => {
    setForm((f) => ({ ...f, [key]: value }))
    setErrors((e) => ({ ...e, [key === 'displayName' || key === 'group' ? 'username' : key]: undefined }))
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    if (original === undefined) return
    const found = validateEdit(form)
    setErrors(found)
    if (Object.keys(found).length > 0) {
      notify.error(t('user.form.fixErrors'))
      return
    }
    const quota = parseInteger(form.quota)!
    const delta = form.delta.trim() === '' ? 0 : parseInteger(form.delta)!
    await act(async () => {
      const saved = await updateUser({
        id: original.id,
        username: form.username.trim(),
        display_name: form.displayName,
        group: form.group,
        ...(form.password === '' ? {} : { password: form.password }),
        // Unchanged, the balance is left alone: the user may have spent since the form loaded.
        ...(quota === original.quota ? {} : { quota }),
        ...(delta === 0 ? {} : { quota_delta: delta }),
        concurrency_limit: parseInteger(form.concurrency)!
      })
      notify.success(t('user.updated'))
      onSaved(saved)
    })
  }

  const quota = parseInteger(form.quota)
  const delta = form.delta.trim() === '' ? 0 : parseInteger(form.delta)
  const shown = (n: number | undefined) => n === undefined ? '-' : `${renderQuota(n, status)}${status?.display_in_currency === true ? ` (${n})` : ''}`
  const options = form.group !== '' && !groups.includes(form.group) ? [...groups, form.group] : groups
  const bindings: Array<[string, string]> = original === undefined
    ? []
    : [
        [t('user.form.email'), original.email],
        [t('user.form.github'), original.github_id],
        [t('user.form.wechat'), original.wechat_id],
        [t('user.form.telegram'), original.telegram_id],
        [t('user.form.linuxdo'), original.linuxdo_id]
      ]

  return (
    <FormDrawer
      open={userId !== undefined} title={t('user.form.editTitle')} width={480} onClose={onClose} onSubmit={submit}
      loading={loading} waiting={waiting} saving={saving} submitLabel={t('common.save')}
    >
      <TextField
        label={t('user.form.username')} value={form.username} required
        onChange={(e) => { set('username', e.target.value) }}
        error={errors.username !== undefined} helperText={errors.username === undefined ? undefined : t(errors.username)}
        slotProps={{ htmlInput: { maxLength: 12, autoComplete: 'off' } }}
      />
      <TextField label={t('user.form.displayName')} value={form.displayName} onChange={(e) => { set('displayName', e.target.value) }} slotProps={{ htmlInput: { maxLength: 64 } }} />
      <TextField
        label={t('user.form.newPassword')} type='password' value={form.password}
        onChange={(e) => { set('password', e.target.value) }}
        error={errors.password !== undefined} helperText={errors.password === undefined ? t('user.form.newPasswordHelp') : t(errors.password)}
        slotProps={{ htmlInput: { maxLength: 20, autoComplete: 'new-password' } }}
      />
      <TextField select label={t('user.form.group')} value={options.includes(form.group) ? form.group : ''} onChange={(e) => { set('group', e.target.value) }}>
        {options.map((g) => <MenuItem key={g} value={g}>{g}</MenuItem>)}
      </TextField>
      <TextField
        label={t('user.form.quota')} value={form.quota}
        onChange={(e) => { set('quota', e.target.value) }}
        error={errors.quota !== undefined}
        helperText={errors.quota === undefined ? t('user.form.quotaHelp', { shown: shown(quota) }) : t(errors.quota)}
        slotProps={{ htmlInput: { inputMode: 'numeric' } }}
      />
      <TextField
        label={t('user.form.delta')} value={form.delta} placeholder='0'
        onChange={(e) => { set('delta', e.target.value) }}
        error={errors.delta !== undefined}
        helperText={errors.delta === undefined
          ? t('user.form.deltaHelp', { shown: shown(quota === undefined || delta === undefined ? undefined : quota + delta) })
          : t(errors.delta)}
        slotProps={{ htmlInput: { inputMode: 'numeric' } }}
      />
      <TextField
        label={t('user.form.concurrency')} value={form.concurrency} placeholder='0'
        onChange={(e) => { set('concurrency', e.target.value) }}
        error={errors.concurrency !== undefined}
        helperText={t(errors.concurrency ?? 'user.form.concurrencyHelp')}
        slotProps={{ htmlInput: { inputMode: 'numeric' } }}
      />
      {original !== undefined && (
        <Box component='section' aria-label={t('user.form.bindings')}>
          <Typography variant='subtitle2' sx={{ mb: 1.5 }}>{t('user.form.bindings')}</Typography>
          <Stack spacing={2}>
            {bindings.map(([label, value]) => (
              <TextField
                key={label} label={label} size='small' value={value === '' ? t('user.form.notBound') : value}
                slotProps={{ htmlInput: { readOnly: true } }}
                sx={value === '' ? { '& input': { color: 'text.secondary' } } : undefined}
              />
            ))}
          </Stack>
        </Box>
      )}
      {original !== undefined && <AdminTwoFactorSection user={original} />}
      {original !== undefined && <AdminPasskeySection user={original} />}
      {original !== undefined && <AdminSubscriptionSection user={original} />}
    </FormDrawer>
  )
}
