import { CHECKIN_QUOTA_MAX, type OptionKey } from '@modelgate/contracts'
import { useTranslation } from 'react-i18next'
import { useConfirm } from '../../components/Confirm'
import { type Field, FieldGrid, OptionCard, rulesOf } from './OptionCard'
import { type Change, useOptionForm } from './useOptionForm'

const MIN: OptionKey = 'checkin_setting.min_quota'
const MAX: OptionKey = 'checkin_setting.max_quota'

/** new-api's daily check-in: the switch and the reward's bounds, in quota units. */
export function CheckinSettingCard ({ worth }: { worth: (value: string) => string }) {
  const { t } = useTranslation()
  const form = useOptionForm()
  const [confirm, dialog] = useConfirm()
  const fields: Field[] = [
    { kind: 'switch', key: 'checkin_setting.enabled', label: t('settingsAdmin.checkin.enabled'), wide: true },
    { kind: 'number', key: MIN, label: t('settingsAdmin.checkin.minQuota'), help: worth, min: 0, max: CHECKIN_QUOTA_MAX, integer: true },
    { kind: 'number', key: MAX, label: t('settingsAdmin.checkin.maxQuota'), help: worth, min: 0, max: CHECKIN_QUOTA_MAX, integer: true }
  ]
  const after = (changes: readonly Change[], key: OptionKey) => Number(changes.find(([k]) => k === key)?.[1] ?? form.options[key]?.value)
  const check = (changes: readonly Change[]) => after(changes, MIN) > after(changes, MAX) ? t('settingsAdmin.checkin.minAboveMax') : undefined
  // The server checks each bound against the other's stored value: a minimum raised past the
  // stored maximum is sent after the new maximum, any other minimum before it.
  const order = (changes: readonly Change[]): Change[] => {
    const min = changes.find(([k]) => k === MIN)
    if (min === undefined) return [...changes]
    const others = changes.filter(([k]) => k !== MIN)
    return Number(min[1]) > Number(form.options[MAX]?.value) ? [...others, min] : [min, ...others]
  }

  return (
    <OptionCard
      id='checkin'
      title={t('settingsAdmin.checkin.title')}
      description={t('settingsAdmin.checkin.description')}
      saving={form.saving}
      onSave={() => { void form.save({ ...rulesOf(t, fields, check), order }) }}
    >
      <FieldGrid fields={fields} form={form} confirm={confirm} />
      {dialog}
    </OptionCard>
  )
}
