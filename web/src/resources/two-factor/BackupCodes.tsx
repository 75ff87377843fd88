import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Stack from '@mui/material/Stack'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import DownloadIcon from '@mui/icons-material/Download'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'

/** Backup codes as shown once: a grid of codes, copy all, download as a text file. */
export function BackupCodes ({ codes }: { codes: readonly string[] }) {
  const { t } = useTranslation()
  const notify = useNotify()
  const { status } = useStatus()
  const { user } = useAuth()
  const site = status?.system_name !== undefined && status.system_name !== '' ? status.system_name : window.location.host
  const text = [t('twoFactor.backup.fileHeader', { user: user?.username ?? '', site }), '', ...codes, ''].join('\n')
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }))
    const a = document.createElement('a')
    a.href = url
    a.download = `${site}-backup-codes.txt`.replace(/[^\w.-]+/g, '-')
    a.click()
    setTimeout(() => { URL.revokeObjectURL(url) }, 0)
  }
  return (
    <Stack spacing={1.5}>
      <Box
        component='ol'
        data-testid='backup-codes'
        sx={{ m: 0, p: 1.5, listStyle: 'none', display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' }, gap: 0.75, bgcolor: 'action.hover', borderRadius: 1, fontFamily: 'monospace', fontSize: '0.95rem' }}
      >
        {codes.map((c) => <Box component='li' key={c} data-testid='backup-code' sx={{ overflowWrap: 'anywhere' }}>{c}</Box>)}
      </Box>
      <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
        <Button size='small' variant='outlined' startIcon={<ContentCopyIcon />} onClick={() => { void notify.copy(codes.join('\n'), t('twoFactor.backup.copied')) }}>{t('twoFactor.backup.copy')}</Button>
        <Button size='small' variant='outlined' startIcon={<DownloadIcon />} onClick={download}>{t('twoFactor.backup.download')}</Button>
      </Stack>
    </Stack>
  )
}
