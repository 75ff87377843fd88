import { CHANNEL_STATUS, type ChannelKeyView, type ChannelView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import CircularProgress from '@mui/material/CircularProgress'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogContentText from '@mui/material/DialogContentText'
import DialogTitle from '@mui/material/DialogTitle'
import Stack from '@mui/material/Stack'
import Table from '@mui/material/Table'
import TableBody from '@mui/material/TableBody'
import TableCell from '@mui/material/TableCell'
import TableContainer from '@mui/material/TableContainer'
import TableHead from '@mui/material/TableHead'
import TableRow from '@mui/material/TableRow'
import Typography from '@mui/material/Typography'
import useMediaQuery from '@mui/material/useMediaQuery'
import { useTheme } from '@mui/material/styles'
import { useMemo, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { TimeCell } from '../../components/columns'
import { formatTime } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { listChannelKeys, setChannelKeyStatus, testChannelKey } from './api'

export interface KeysDialogProps {
  /** The channel whose keys are shown; undefined closes the dialog. */
  channel: ChannelView | undefined
  onClose: () => void
  /** A key's state or the channel's test results changed: the list should reload. */
  onChanged: () => void
}

function KeyStatus ({ status }: { status: number }) {
  const { t } = useTranslation()
  if (status === CHANNEL_STATUS.enabled) return <Chip size='small' color='success' label={t('channel.keys.enabled')} />
  if (status === CHANNEL_STATUS.disabled) return <Chip size='small' label={t('channel.keys.disabled')} />
  return <Chip size='small' color='warning' label={t('channel.keys.autoDisabled')} />
}

/**
 * The keys of a multi-key channel, one row each: masked key, state, why and since when, and
 * per-key test and enable/disable. The table scrolls inside the dialog on narrow screens.
 */
export function KeysDialog ({ channel: open, onClose, onChanged }: KeysDialogProps) {
  const { t } = useTranslation()
  const theme = useTheme()
  const small = useMediaQuery(theme.breakpoints.down('sm'))
  // Kept while the dialog fades out, so its content does not go blank meanwhile.
  const [channel, setChannel] = useState(open)
  if (open !== undefined && open !== channel) setChannel(open)
  const id = open?.id
  const load = useMemo(() => id === undefined ? undefined : async () => await listChannelKeys(id), [id])
  const { data: keys, setData: setKeys, reload } = useLoad(load, { fresh: true })
  const { act } = useAction(reload)
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set())

  const mark = (fingerprint: string, on: boolean) => {
    setBusy((s) => {
      const next = new Set(s)
      if (on) next.add(fingerprint)
      else next.delete(fingerprint)
      return next
    })
  }

  const test = async (key: ChannelKeyView) => {
    if (channel === undefined) return
    mark(key.fingerprint, true)
    // The test may have changed the key's state (and the channel's).
    await act(async () => await testChannelKey(channel.id, key.index), { done: (message) => message, reload: 'always' })
    mark(key.fingerprint, false)
    onChanged()
  }

  const toggle = async (key: ChannelKeyView) => {
    if (channel === undefined) return
    mark(key.fingerprint, true)
    const done = await act(async () => await setChannelKeyStatus(channel.id, key.fingerprint, key.status === CHANNEL_STATUS.enabled ? CHANNEL_STATUS.disabled : CHANNEL_STATUS.enabled), {
      done: (answer) => answer.message,
      reload: 'never'
    })
    if (done !== undefined) {
      setKeys(done.keys)
      onChanged()
    }
    mark(key.fingerprint, false)
  }

  const title = t('channel.keys.title', { name: channel?.name ?? '' })
  return (
    <Dialog open={open !== undefined} onClose={onClose} fullWidth maxWidth='md' fullScreen={small} aria-labelledby='channel-keys-title'>
      <DialogTitle id='channel-keys-title'>{title}</DialogTitle>
      <DialogContent>
        <DialogContentText sx={{ mb: 2 }}>{t('channel.keys.intro')}</DialogContentText>
        {keys === undefined
          ? <Box sx={{ display: 'flex', justifyContent: 'center', py: 3 }}><CircularProgress size={28} /></Box>
          : (
            <TableContainer sx={{ overflowX: 'auto', maxWidth: '100%' }}>
              <Table size='small' aria-label={title}>
                <TableHead>
                  <TableRow>
                    <TableCell>{t('channel.keys.index')}</TableCell>
                    <TableCell>{t('channel.keys.key')}</TableCell>
                    <TableCell>{t('channel.keys.status')}</TableCell>
                    <TableCell>{t('channel.keys.detail')}</TableCell>
                    <TableCell>{t('channel.keys.time')}</TableCell>
                    <TableCell>{t('channel.keys.actions')}</TableCell>
                  </TableRow>
                </TableHead>
                <TableBody>
                  {keys.length === 0 && (
                    <TableRow><TableCell colSpan={6} align='center'>{t('channel.keys.empty')}</TableCell></TableRow>
                  )}
                  {keys.map((key) => {
                    const n = key.index + 1
                    const working = busy.has(key.fingerprint)
                    // A key auto-disabled for an error has that error as its reason: shown once.
                    const lastError = key.last_error === key.reason ? '' : key.last_error
                    return (
                      <TableRow key={key.fingerprint} data-testid={`key-row-${key.index}`}>
                        <TableCell>{n}</TableCell>
                        <TableCell sx={{ fontFamily: 'monospace', whiteSpace: 'nowrap' }}>{key.hint}</TableCell>
                        <TableCell><KeyStatus status={key.status} /></TableCell>
                        <TableCell sx={{ minWidth: 160, maxWidth: 280, overflowWrap: 'anywhere' }}>
                          {key.reason === '' && lastError === ''
                            ? <Typography variant='body2' color='text.secondary'>{t('channel.keys.none')}</Typography>
                            : (
                              <Stack spacing={0.5}>
                                {key.reason !== '' && <Typography variant='body2'>{t('channel.keys.reason', { reason: key.reason })}</Typography>}
                                {lastError !== '' && (
                                  <Typography variant='body2' color='text.secondary' title={key.last_error_time > 0 ? t('channel.keys.lastErrorAt', { time: formatTime(key.last_error_time) }) : undefined}>
                                    {t('channel.keys.lastError', { error: lastError })}
                                  </Typography>
                                )}
                              </Stack>
                              )}
                        </TableCell>
                        <TimeCell seconds={key.time} none='—' />
                        <TableCell sx={{ whiteSpace: 'nowrap' }}>
                          <Stack direction='row' spacing={1}>
                            <Button
                              size='small' variant='outlined' disabled={working} aria-label={t('channel.keys.testOf', { n })}
                              onClick={() => { void test(key) }}
                            >
                              {t('channel.keys.test')}
                            </Button>
                            <Button
                              size='small' disabled={working} color={key.status === CHANNEL_STATUS.enabled ? 'warning' : 'success'}
                              aria-label={key.status === CHANNEL_STATUS.enabled ? t('channel.keys.disableOf', { n }) : t('channel.keys.enableOf', { n })}
                              onClick={() => { void toggle(key) }}
                            >
                              {key.status === CHANNEL_STATUS.enabled ? t('channel.keys.disable') : t('channel.keys.enable')}
                            </Button>
                          </Stack>
                        </TableCell>
                      </TableRow>
                    )
                  })}
                </TableBody>
              </Table>
            </TableContainer>
            )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('channel.keys.close')}</Button>
      </DialogActions>
    </Dialog>
  )
}
