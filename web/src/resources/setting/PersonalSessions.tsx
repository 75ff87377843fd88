import type { SessionView } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import CircularProgress from '@mui/material/CircularProgress'
import Divider from '@mui/material/Divider'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import ComputerIcon from '@mui/icons-material/ComputerOutlined'
import {  } from 'react'
import { useTranslation } from 'react-i18next'
import { get, requestEnvelope } from '../../api/client'
import { useConfirm } from '../../components/Confirm'
import { formatTime } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { PersonalCard } from './PersonalCard'

/** The signed-in sessions of the account: this one first, then the others most recently seen first. */
async function listSessions (): Promise<SessionView[]> {
  return await get<SessionView[]>('/api/user/sessions')
}

/** Ends one session (not this one); the server's message. */
async function revokeSession (id: string): Promise<string> {
  return (await requestEnvelope<number>('DELETE', `/api/user/sessions/${encodeURIComponent(id)}`)).message
}

/** Ends every session but this one (which the server signs again); the server's message. */
async function revokeOtherSessions (): Promise<string> {
  return (await requestEnvelope<number>('DELETE', '/api/user/sessions')).message
}

/** Where the account is signed in, with a way to sign any other session out. */
export function PersonalSessions () {
  const { t } = useTranslation()
  const [confirm, confirmDialog] = useConfirm()
  const { data: sessions, error, reload } = useLoad(listSessions)
  const failed = error !== undefined
  const { act, busy } = useAction(reload)

  const device = (s: SessionView): string => s.browser !== '' && s.os !== ''
    ? t('setting.personal.sessions.device', { browser: s.browser, os: s.os })
    : s.browser !== '' ? s.browser : s.os !== '' ? s.os : t('setting.personal.sessions.unknownDevice')

  const revoke = async (s: SessionView) => {
    await act(async () => await revokeSession(s.id), { done: (message) => message, reload: 'always' })
  }

  const revokeOthers = async () => {
    const ok = await confirm({
      title: t('setting.personal.sessions.othersTitle'),
      body: t('setting.personal.sessions.othersBody'),
      action: t('setting.personal.sessions.others'),
      danger: true
    })
    if (!ok) return
    await act(revokeOtherSessions, { done: (message) => message, reload: 'always' })
  }

  const others = sessions?.filter((s) => !s.current).length ?? 0
  return (
    <PersonalCard
      title={t('setting.personal.sessions.title')}
      testId='personal-sessions'
      wide
      action={<Button size='small' color='warning' disabled={busy || others === 0} onClick={() => { void revokeOthers() }}>{t('setting.personal.sessions.others')}</Button>}
    >
      <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>{t('setting.personal.sessions.help')}</Typography>
      {failed && <Alert severity='error'>{t('setting.personal.sessions.loadFailed')}</Alert>}
      {sessions === undefined && !failed && <CircularProgress size={24} />}
      {sessions !== undefined && (
        <Stack divider={<Divider flexItem />} sx={{ gap: 1.5 }}>
          {sessions.map((s) => (
              <Stack
                key={s.id}
                data-testid='session-row'
                data-current={s.current ? 'true' : 'false'}
                direction={{ xs: 'column', sm: 'row' }}
                sx={{ gap: { xs: 1, sm: 2 }, alignItems: { xs: 'stretch', sm: 'center' }, minWidth: 0 }}
              >
                <ComputerIcon color='action' sx={{ display: { xs: 'none', sm: 'block' } }} />
                <Box sx={{ flex: 1, minWidth: 0 }}>
                  <Stack direction='row' sx={{ alignItems: 'center', gap: 1, flexWrap: 'wrap' }}>
                    <Typography variant='subtitle2' component='p' title={s.user_agent} sx={{ overflowWrap: 'anywhere' }}>{device(s)}</Typography>
                    {s.current && <Chip size='small' color='success' variant='outlined' label={t('setting.personal.sessions.thisDevice')} />}
                  </Stack>
                  <Typography variant='body2' color='text.secondary' sx={{ overflowWrap: 'anywhere' }}>
                    {t('setting.personal.sessions.details', { ip: s.ip === '' ? '-' : s.ip, signedIn: formatTime(s.created_at), lastSeen: formatTime(s.last_seen_at) })}
                  </Typography>
                </Box>
                {!s.current && (
                  <Button
                    size='small'
                    variant='outlined'
                    color='error'
                    disabled={busy}
                    aria-label={t('setting.personal.sessions.revokeOne', { device: device(s) })}
                    onClick={() => { void revoke(s) }}
                    sx={{ alignSelf: { xs: 'flex-start', sm: 'center' }, flexShrink: 0 }}
                  >
                    {t('setting.personal.sessions.revoke')}
                  </Button>
                )}
              </Stack>
          ))}
        </Stack>
      )}
      {confirmDialog}
    </PersonalCard>
  )
}
