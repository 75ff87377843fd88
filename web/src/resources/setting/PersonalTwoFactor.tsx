import { useTranslation } from 'react-i18next'
import { TwoFactorPanel } from '../two-factor/TwoFactorPanel'
import { PersonalCard } from './PersonalCard'

/** Two-factor sign-in (TOTP) of the signed-in user: set up, new backup codes, disable. */
export function PersonalTwoFactor () {
  const { t } = useTranslation()
  return (
    <PersonalCard title={t('twoFactor.title')} testId='personal-two-factor'>
      <TwoFactorPanel />
    </PersonalCard>
  )
}
