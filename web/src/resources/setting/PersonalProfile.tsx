import { ROLES, type UserView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import IconButton from '@mui/material/IconButton'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import EditIcon from '@mui/icons-material/EditOutlined'
import { type FormEvent, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { requestEnvelope } from '../../api/client'
import { useStatus } from '../../api/useStatus'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { renderNumber, renderQuota } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { PersonalCard, PersonalStat } from './PersonalCard'

/** Username, display name (editable), group, role, balance, used quota and request count. */
export function PersonalProfile ({ self, onChange }: { self: UserView, onChange: (user: UserView) => void }) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const { signIn } = useAuth()
  const notify = useNotify()
  const [editing, setEditing] = useState(false)
  const [name, setName] = useState('')
  const { act, busy } = useAction()
  const role = self.role >= ROLES.root ? t('setting.personal.profile.roleRoot') : self.role >= ROLES.admin ? t('setting.personal.profile.roleAdmin') : t('setting.personal.profile.roleUser')

  const save = async (e: FormEvent) => {
    e.preventDefault()
    await act(async () => {
      const res = await requestEnvelope<UserView>('PUT', '/api/user/self', { body: { display_name: name.trim() } })
      if (res.data !== undefined) {
        onChange(res.data)
        // The top bar shows the display name from the stored user.
        signIn(res.data)
      }
      notify.success(res.message !== '' ? res.message : t('setting.personal.profile.updated'))
      setEditing(false)
    })
  }

  return (
    <PersonalCard title={t('setting.personal.profile.title')} testId='personal-profile' wide>
      <Box sx={{ display: 'grid', gridTemplateColumns: { xs: 'repeat(2, minmax(0, 1fr))', md: 'repeat(4, minmax(0, 1fr))' }, gap: 2 }}>
        <PersonalStat label={t('setting.personal.profile.username')} value={self.username} testId='profile-username' />
        <Stack sx={{ minWidth: 0 }}>
          {editing
            ? (
              <Stack component='form' onSubmit={(e) => { void save(e) }} direction='row' sx={{ gap: 1, alignItems: 'center' }}>
                <TextField
                  size='small'
                  label={t('setting.personal.profile.displayName')}
                  value={name}
                  onChange={(e) => { setName(e.target.value) }}
                  autoFocus
                  slotProps={{ htmlInput: { maxLength: 64 } }}
                  sx={{ minWidth: 0, flex: 1 }}
                />
                <Button type='submit' size='small' variant='contained' disabled={busy}>{t('common.save')}</Button>
                <Button size='small' onClick={() => { setEditing(false) }}>{t('common.cancel')}</Button>
              </Stack>
              )
            : (
              <Stack direction='row' sx={{ alignItems: 'flex-end', gap: 0.5, minWidth: 0 }}>
                <PersonalStat label={t('setting.personal.profile.displayName')} value={self.display_name !== '' ? self.display_name : self.username} testId='profile-display-name' />
                <IconButton
                  size='small'
                  aria-label={t('setting.personal.profile.editDisplayName')}
                  onClick={() => { setName(self.display_name !== '' ? self.display_name : self.username); setEditing(true) }}
                >
                  <EditIcon fontSize='small' />
                </IconButton>
              </Stack>
              )}
        </Stack>
        <PersonalStat label={t('setting.personal.profile.group')} value={self.group} />
        <PersonalStat label={t('setting.personal.profile.role')} value={role} />
        <PersonalStat label={t('setting.personal.profile.quota')} value={renderQuota(self.quota, status)} testId='profile-quota' />
        <PersonalStat label={t('setting.personal.profile.usedQuota')} value={renderQuota(self.used_quota, status)} />
        <PersonalStat label={t('setting.personal.profile.requests')} value={renderNumber(self.request_count)} />
      </Box>
    </PersonalCard>
  )
}
