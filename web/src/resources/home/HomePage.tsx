import Alert from '@mui/material/Alert'
import Paper from '@mui/material/Paper'
import Typography from '@mui/material/Typography'
import { useCallback } from 'react'
import { useTranslation } from 'react-i18next'
import { get } from '../../api/client'
import { useStatus } from '../../api/useStatus'
import { FramedPage } from '../../components/FramedPage'
import { Html, isUrl } from '../../components/Html'
import { useLoad } from '../../lib/useLoad'

/** Reads a public content option (`/api/notice`, `/api/home_page_content`, `/api/about`); '' on failure. */
export function useContent (path: string): string | undefined {
  const load = useCallback(async () => await get<string>(path), [path])
  const { data, error } = useLoad(load, { quiet: true })
  return error === undefined ? data : ''
}

/** HomePageContent as Markdown/HTML, or a frame when it is a URL; the Notice above it. */
export default function HomePage () {
  const { t } = useTranslation()
  const { status, error } = useStatus()
  const notice = useContent('/api/notice')
  const content = useContent('/api/home_page_content')
  const address = status?.server_address !== undefined && status.server_address !== '' ? status.server_address : window.location.origin
  return (
    <>
      {error && <Alert severity='error' sx={{ mb: 2 }}>{t('status.unreachable')}</Alert>}
      {notice !== undefined && notice !== '' && (
        <Alert severity='info' sx={{ mb: 2 }} data-testid='notice'><Html html={notice} markdown /></Alert>
      )}
      {content === undefined
        ? null
        : content === ''
          ? (
            <Paper sx={{ p: { xs: 2, sm: 4 } }}>
              <Typography variant='h4' component='h1' gutterBottom>{t('home.title')}</Typography>
              <Typography color='text.secondary'>{t('home.subtitle', { address: `${address}/v1`, origin: address })}</Typography>
            </Paper>
            )
          : isUrl(content)
            ? <FramedPage src={content} title='home' testId='home-frame' />
            : <Html html={content} markdown data-testid='home-content' />}
    </>
  )
}
