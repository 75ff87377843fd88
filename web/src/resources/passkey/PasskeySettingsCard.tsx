import { useTranslation } from 'react-i18next'
import { FieldsCard } from '../settings-admin/OptionCard'

/** The super admin's passkey options: on or off, the relying party ID and the allowed origins (empty: taken from each request). */
export function PasskeySettingsCard () {
  const { t } = useTranslation()
  return (
    <FieldsCard
      id='passkey'
      title={t('passkey.settings.card')}
      description={t('passkey.settings.cardHelp')}
      fields={[
        { kind: 'switch', key: 'PasskeyEnabled', label: t('passkey.settings.PasskeyEnabled'), wide: true },
        { kind: 'text', key: 'PasskeyRPID', label: t('passkey.settings.PasskeyRPID'), help: t('passkey.settings.PasskeyRPIDHelp'), placeholder: window.location.hostname },
        { kind: 'text', key: 'PasskeyOrigins', label: t('passkey.settings.PasskeyOrigins'), help: t('passkey.settings.PasskeyOriginsHelp'), placeholder: window.location.origin }
      ]}
    />
  )
}
