import Alert from '@mui/material/Alert'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import { useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { get } from '../../api/client'
import { useNotify } from '../../components/Notify'
import { PersonalCard } from './PersonalCard'

/** The models of the user's group, as chips that copy their name. */
export function PersonalModels () {
  const { t } = useTranslation()
  const notify = useNotify()
  const [models, setModels] = useState<string[] | undefined>()
  const [failed, setFailed] = useState(false)
  useEffect(() => {
    let live = true
    get<string[]>('/api/user/models').then((m) => { if (live) setModels(m) }, (err: unknown) => {
      if (!live) return
      setFailed(true)
      notify.error(err)
    })
    return () => { live = false }
  }, [notify])
  return (
    <PersonalCard
      title={t('setting.personal.models.title')}
      testId='personal-models'
      wide
      action={models !== undefined && models.length > 0
        ? <Button size='small' onClick={() => { void notify.copy(models.join(',')) }}>{t('setting.personal.models.copyAll')}</Button>
        : undefined}
    >
      {failed && <Alert severity='error'>{t('setting.personal.models.loadFailed')}</Alert>}
      {models !== undefined && models.length === 0 && <Alert severity='info'>{t('setting.personal.models.none')}</Alert>}
      {models !== undefined && models.length > 0 && (
        <>
          <Typography variant='body2' color='text.secondary' sx={{ mb: 1.5 }}>{t('setting.personal.models.help')}</Typography>
          <Stack direction='row' sx={{ flexWrap: 'wrap', gap: 1 }}>
            {models.map((m) => <Chip key={m} label={m} variant='outlined' onClick={() => { void notify.copy(m) }} sx={{ maxWidth: '100%' }} />)}
          </Stack>
        </>
      )}
    </PersonalCard>
  )
}
