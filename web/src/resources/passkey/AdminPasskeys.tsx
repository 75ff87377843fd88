import type { UserView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import { useCallback } from 'react'
import { useTranslation } from 'react-i18next'
import { useAuth } from '../../auth/AuthContext'
import { useConfirm } from '../../components/Confirm'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { resetUserPasskeys, userPasskeys } from './api'

/**
 * The edit drawer's passkey section: how many passkeys the user has, and the reset for a user who
 * lost a device (the server allows it only on lower roles, signs the user out and audits it).
 */
export function AdminPasskeySection ({ user }: { user: UserView }) {
  const { t } = useTranslation()
  // An admin's own passkeys are theirs to manage in personal settings; a peer's list the server refuses (the section stays hidden).
  const self = useAuth().user?.id === user.id
  const [confirm, dialog] = useConfirm()
  const loadCount = useCallback(async () => (await userPasskeys(user.id)).items.length, [user.id])
  // Hidden, without a toast, when the server refuses the list.
  const counted = useLoad(loadCount, { quiet: true, fresh: true })
  const count = counted.error === undefined ? counted.data : undefined
  const setCount = counted.setData
  const { act, busy } = useAction()
  const reset = async () => {
    const ok = await confirm({ title: t('passkey.admin.resetTitle'), body: t('passkey.admin.resetBody', { name: user.username }), action: t('passkey.admin.reset'), danger: true })
    if (!ok) return
    await act(async () => {
      await resetUserPasskeys(user.id)
      setCount(0)
    }, { done: t('passkey.admin.resetDone') })
  }
  if (count === undefined) return null
  return (
    <Box component='section' aria-label={t('passkey.admin.section')} data-testid='user-passkey-section'>
      <Typography variant='subtitle2' sx={{ mb: 1.5 }}>{t('passkey.admin.section')}</Typography>
      <Stack direction='row' spacing={1} useFlexGap sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
        <Chip size='small' color={count > 0 ? 'success' : 'default'} variant={count > 0 ? 'filled' : 'outlined'} label={count > 0 ? t('passkey.admin.count', { count }) : t('passkey.admin.none')} data-testid='user-passkey-count' />
        {count > 0 && !self && <Button size='small' color='error' variant='outlined' disabled={busy} onClick={() => { void reset() }}>{t('passkey.admin.reset')}</Button>}
      </Stack>
      {dialog}
    </Box>
  )
}
