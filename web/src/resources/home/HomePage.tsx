import type { StatusData } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Typography from '@mui/material/Typography'
import { useTranslation } from 'react-i18next'

export function HomePage ({ status, error }: { status: StatusData | undefined, error: boolean }) {
  const { t } = useTranslation()
  const address = status?.server_address !== undefined && status.server_address !== '' ? status.server_address : window.location.origin
  return (
    <>
      {error && <Alert severity='error' sx={{ mb: 2 }}>{t('status.unreachable')}</Alert>}
      <Typography variant='h4' component='h1' gutterBottom>{t('home.title')}</Typography>
      <Typography color='text.secondary'>{t('home.subtitle', { address: `${address}/v1` })}</Typography>
    </>
  )
}
