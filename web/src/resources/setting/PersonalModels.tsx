import Alert from '@mui/material/Alert'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import { useTranslation } from 'react-i18next'
import { get } from '../../api/client'
import { useNotify } from '../../components/Notify'
import { useLoad } from '../../lib/useLoad'
import { PersonalCard } from './PersonalCard'

/** The models of the caller's group. */
const userModels = async (): Promise<string[]> => await get<string[]>('/api/user/models')

/** The models of the user's group, as chips that copy their name. */
export function PersonalModels () {
  const { t } = useTranslation()
  const notify = useNotify()
  const { data: models, error } = useLoad(userModels)
  const failed = error !== undefined
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
