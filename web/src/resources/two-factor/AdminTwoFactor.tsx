import type { UserView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import { useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useConfirm } from '../../components/Confirm'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { resetUserTwoFactor, twoFactorStats } from './api'

/** The small "2FA on" mark of a user in the admin list. */
export function TwoFactorChip ({ user }: { user: Pick<UserView, 'two_fa_enabled'> }) {
  const { t } = useTranslation()
  if (user.two_fa_enabled !== true) return null
  return <Chip size='small' color='info' variant='outlined' label={t('twoFactor.admin.on')} data-testid='user-two-factor' />
}

/** How many live users have 2FA on (GET /api/user/2fa/stats). */
export function TwoFactorStatsLine () {
  const { t } = useTranslation()
  // Left out, without a toast, when it cannot be read.
  const { data: stats } = useLoad(twoFactorStats, { quiet: true })
  if (stats === undefined) return null
  return (
    <Typography variant='body2' color='text.secondary' data-testid='two-factor-stats'>
      {t('twoFactor.admin.stats', { enabled: stats.enabled_users, total: stats.total_users, rate: stats.enabled_rate })}
    </Typography>
  )
}

/**
 * The edit drawer's 2FA section: on or off, and the reset for a user who lost the authenticator
 * and the backup codes (the server allows it only on lower roles and signs the user out).
 */
export function AdminTwoFactorSection ({ user }: { user: UserView }) {
  const { t } = useTranslation()
  const [confirm, dialog] = useConfirm()
  const [enabled, setEnabled] = useState(user.two_fa_enabled === true)
  const { act, busy } = useAction()
  useEffect(() => { setEnabled(user.two_fa_enabled === true) }, [user])
  const reset = async () => {
    const ok = await confirm({ title: t('twoFactor.admin.resetTitle'), body: t('twoFactor.admin.resetBody', { name: user.username }), action: t('twoFactor.admin.reset'), danger: true })
    if (!ok) return
    await act(async () => {
      await resetUserTwoFactor(user.id)
      setEnabled(false)
    }, { done: t('twoFactor.admin.resetDone') })
  }
  return (
    <Box component='section' aria-label={t('twoFactor.admin.section')} data-testid='user-two-factor-section'>
      <Typography variant='subtitle2' sx={{ mb: 1.5 }}>{t('twoFactor.admin.section')}</Typography>
      <Stack direction='row' spacing={1} useFlexGap sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
        <Chip size='small' color={enabled ? 'success' : 'default'} variant={enabled ? 'filled' : 'outlined'} label={t(enabled ? 'twoFactor.status.enabled' : 'twoFactor.status.disabled')} />
        {enabled && <Button size='small' color='error' variant='outlined' disabled={busy} onClick={() => { void reset() }}>{t('twoFactor.admin.reset')}</Button>}
      </Stack>
      {dialog}
    </Box>
  )
}
