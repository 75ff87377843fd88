import Button from '@mui/material/Button'
import Typography from '@mui/material/Typography'
import { useTranslation } from 'react-i18next'
import { Link as RouterLink } from 'react-router-dom'

export function NotFoundPage () {
  const { t } = useTranslation()
  return (
    <>
      <Typography variant='h4' component='h1' gutterBottom>{t('notFound.title')}</Typography>
      <Typography color='text.secondary' sx={{ mb: 2 }}>{t('notFound.body')}</Typography>
      <Button variant='contained' component={RouterLink} to='/'>{t('notFound.back')}</Button>
    </>
  )
}
