import Paper from '@mui/material/Paper'
import Typography from '@mui/material/Typography'
import { useTranslation } from 'react-i18next'
import { FramedPage } from '../../components/FramedPage'
import { Html, isUrl } from '../../components/Html'
import { useContent } from '../home/HomePage'

/** The About option as Markdown/HTML, or a frame when it is a URL. */
export default function AboutPage () {
  const { t } = useTranslation()
  const about = useContent('/api/about')
  if (about === undefined) return null
  if (about === '') {
    return (
      <Paper sx={{ p: 3 }}>
        <Typography variant='h5' component='h1' gutterBottom>{t('about.title')}</Typography>
        <Typography color='text.secondary'>{t('about.empty')}</Typography>
      </Paper>
    )
  }
  if (isUrl(about)) return <FramedPage src={about} title='about' testId='about-frame' />
  return <Html html={about} markdown data-testid='about-content' />
}
