import TextField from '@mui/material/TextField'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { FormDrawer } from '../../components/FormDrawer'
import { useNotify } from '../../components/Notify'
import { quotaOf, renderQuota } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { useRecord } from '../../lib/useRecord'
import { createRedemptions, getRedemption, updateRedemption } from './api'
import { defaultCodeName } from './download'
import { DEFAULT_REDEMPTION_QUOTA, REDEMPTION_BATCH_MAX, REDEMPTION_NAME_MAX } from './limits'

export interface RedemptionDrawerProps {
  open: boolean
  /** The code to edit; undefined creates a batch. */
  id: number | undefined
  onClose: () => void
  /** After creating: the new codes and the name they were given. */
  onCreated: (keys: string[], name: string) => void
  onSaved: () => void
}

interface Errors { name?: string, quota?: string, count?: string }

/** Create (name, quota, count) and edit (name, quota) of a redemption code. */
export function RedemptionDrawer ({ open, id, onClose, onCreated, onSaved }: RedemptionDrawerProps) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const creating = id === undefined
  // With currency display on, admins think in dollars: the quota is typed in dollars.
  const dollars = status?.display_in_currency === true && status.quota_per_unit > 0
  const [name, setName] = useState('')
  const [quota, setQuota] = useState('')
  const [count, setCount] = useState('1')
  const [errors, setErrors] = useState<Errors>({})
  const { act, busy: saving } = useAction()

  const perUnit = status?.quota_per_unit ?? 500_000
  const quotaText = (units: number) => dollars ? String(units / perUnit) : String(units)
  const { loading, waiting } = useRecord(open, id, getRedemption, {
    onLoad: (r) => {
      setName(r.name)
      setQuota(quotaText(r.quota))
    },
    onFail: onClose
  })

  useEffect(() => {
    if (!open) return
    setErrors({})
    setName('')
    setCount('1')
    setQuota(quotaText(DEFAULT_REDEMPTION_QUOTA))
    // The status (dollars or units) is read when the drawer opens; a change while open is not followed.
  }, [open, id])

  /** The typed quota in units; undefined unless a positive amount. */
  const units = (() => {
    const text = quota.trim()
    if (dollars ? !/^\d+(\.\d+)?$/.test(text) : !/^\d+$/.test(text)) return undefined
    const n = dollars ? quotaOf(Number(text), status) : Number(text)
    return Number.isSafeInteger(n) && n >= 1 ? n : undefined
  })()

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    const found: Errors = {}
    if ([...name.trim()].length > REDEMPTION_NAME_MAX) found.name = t('redemption.form.nameLength')
    if (units === undefined) found.quota = t('redemption.form.quotaInvalid')
    const n = Number(count.trim())
    if (creating && (!/^\d+$/.test(count.trim()) || n < 1 || n > REDEMPTION_BATCH_MAX)) found.count = t('redemption.form.countInvalid')
    setErrors(found)
    if (Object.keys(found).length > 0 || units === undefined) {
      notify.error(t('redemption.form.fixErrors'))
      return
    }
    await act(async () => {
      if (creating) {
        const keys = await createRedemptions({ name: name.trim(), quota: units, count: n })
        onCreated(keys, name.trim() === '' ? defaultCodeName(units, status) : name.trim())
      } else {
        await updateRedemption({ id, name: name.trim(), quota: units })
        notify.success(t('redemption.updated'))
        onSaved()
      }
    })
  }

  const title = creating ? t('redemption.form.createTitle') : t('redemption.form.editTitle')
  return (
    <FormDrawer
      open={open}
      waiting={waiting}
      title={title}
      width={440}
      onClose={onClose}
      onSubmit={submit}
      loading={loading}
      saving={saving}
      submitLabel={creating ? t('redemption.form.create') : t('common.save')}
    >
      <TextField
        label={t('redemption.form.name')} value={name} autoFocus={creating}
        onChange={(e) => { setName(e.target.value); setErrors((x) => ({ ...x, name: undefined })) }}
        error={errors.name !== undefined} helperText={errors.name ?? t('redemption.form.nameHelp')}
      />
      <TextField
        label={dollars ? `${t('redemption.form.quota')} ($)` : t('redemption.form.quota')} value={quota}
        onChange={(e) => { setQuota(e.target.value); setErrors((x) => ({ ...x, quota: undefined })) }}
        error={errors.quota !== undefined}
        helperText={errors.quota ?? (dollars
          ? t('redemption.form.quotaDollarsHelp', { units: units ?? '-' })
          : t('redemption.form.quotaUnitsHelp', { shown: units === undefined ? '-' : renderQuota(units, status) }))}
        slotProps={{ htmlInput: { inputMode: dollars ? 'decimal' : 'numeric' } }}
      />
      {creating && (
        <TextField
          label={t('redemption.form.count')} value={count}
          onChange={(e) => { setCount(e.target.value); setErrors((x) => ({ ...x, count: undefined })) }}
          error={errors.count !== undefined} helperText={errors.count ?? t('redemption.form.countHelp')}
          slotProps={{ htmlInput: { inputMode: 'numeric' } }}
        />
      )}
    </FormDrawer>
  )
}
