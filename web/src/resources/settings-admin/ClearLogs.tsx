import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Divider from '@mui/material/Divider'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import dayjs from 'dayjs'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'
import { formatTime } from '../../lib/format'
import { clearLogsBefore } from './api'
import { useConfirm } from '../../components/Confirm'
import { useAction } from '../../lib/useAction'

/** Deletes every log created before a chosen time, after a confirmation, and tells how many went. */
export function ClearLogs () {
  const { t } = useTranslation()
  const notify = useNotify()
  const [confirm, dialog] = useConfirm()
  const [before, setBefore] = useState(() => dayjs().subtract(1, 'month').format('YYYY-MM-DDTHH:mm'))
  const { act, busy } = useAction()
  const [cleared, setCleared] = useState<number>()

  const clear = async () => {
    const when = before === '' ? undefined : dayjs(before)
    if (when === undefined || !when.isValid()) {
      notify.warning(t('settingsAdmin.log.chooseTime'))
      return
    }
    const timestamp = when.unix()
    const ok = await confirm({
      title: t('settingsAdmin.log.confirmTitle'),
      body: t('settingsAdmin.log.confirmBody', { time: formatTime(timestamp) }),
      action: t('settingsAdmin.log.clear'),
      danger: true
    })
    if (!ok) return
    await act(async () => {
      const { count, message } = await clearLogsBefore(timestamp)
      setCleared(count)
      notify.success(message !== '' ? message : t('settingsAdmin.log.cleared', { n: count }))
    })
  }

  return (
    <Box sx={{ mt: 3 }}>
      <Divider sx={{ mb: 2 }} />
      <Typography variant='subtitle1' component='h3' gutterBottom>{t('settingsAdmin.log.clearTitle')}</Typography>
      <Stack direction={{ xs: 'column', sm: 'row' }} sx={{ gap: 1, alignItems: { sm: 'flex-start' } }}>
        <TextField
          label={t('settingsAdmin.log.before')}
          type='datetime-local'
          size='small'
          value={before}
          onChange={(e) => { setBefore(e.target.value) }}
          helperText={t('settingsAdmin.log.beforeHelp')}
          slotProps={{ inputLabel: { shrink: true } }}
          sx={{ minWidth: { sm: 260 } }}
        />
        <Button variant='outlined' color='error' onClick={() => { void clear() }} disabled={busy}>{t('settingsAdmin.log.clear')}</Button>
      </Stack>
      {cleared !== undefined && (
        <Typography role='status' data-testid='logs-cleared' sx={{ mt: 1 }}>{t('settingsAdmin.log.cleared', { n: cleared })}</Typography>
      )}
      {dialog}
    </Box>
  )
}
