import type { TwoFactorStatus } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Button from '@mui/material/Button'
import Stack from '@mui/material/Stack'
import { useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNavigate } from 'react-router-dom'
import { useAuth } from '../../auth/AuthContext'
import { AuthCard } from '../auth/AuthCard'
import { CONSOLE_HOME } from '../auth/useFinishSignIn'
import { TwoFactorPanel } from './TwoFactorPanel'

/**
 * /two-factor: where the console sends an admin without 2FA while the super admin requires it
 * (TwoFactorRequiredForAdmins); nothing else answers them until it is set up.
 */
export default function TwoFactorSetupPage () {
  const { t } = useTranslation()
  const { signOut } = useAuth()
  const navigate = useNavigate()
  const [status, setStatus] = useState<TwoFactorStatus | undefined>()
  const onChange = useCallback((s: TwoFactorStatus) => { setStatus(s) }, [])
  return (
    <AuthCard title={t('twoFactor.required.title')}>
      <Stack spacing={2}>
        {status?.setup_required === true && <Alert severity='warning' data-testid='two-factor-required'>{t('twoFactor.required.body')}</Alert>}
        <TwoFactorPanel onChange={onChange} />
        <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap', justifyContent: 'space-between' }}>
          <Button onClick={() => { void signOut().then(() => { navigate('/login') }) }}>{t('twoFactor.required.signOut')}</Button>
          {status?.enabled === true && <Button variant='contained' onClick={() => { navigate(CONSOLE_HOME) }}>{t('twoFactor.required.done')}</Button>}
        </Stack>
      </Stack>
    </AuthCard>
  )
}
