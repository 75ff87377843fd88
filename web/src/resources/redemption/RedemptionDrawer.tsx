import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Drawer from '@mui/material/Drawer'
import IconButton from '@mui/material/IconButton'
import LinearProgress from '@mui/material/LinearProgress'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import CloseIcon from '@mui/icons-material/Close'
import { type FormEvent, useEffect, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { quotaOf, renderQuota } from '../../lib/format'
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

/** Create (name, quota, count) and edit (name, quota) of SPEC.md section 2, Redemption page. */
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
  const [loading, setLoading] = useState(false)
  const [saving, setSaving] = useState(false)
  const closeRef = useRef(onClose)
  useEffect(() => { closeRef.current = onClose })

  const perUnit = status?.quota_per_unit ?? 500_000
  const quotaText = (units: number) => dollars ? String(units / perUnit) : String(units)

  useEffect(() => {
    if (!open) return
    let live = true
    setErrors({})
    setName('')
    setCount('1')
    setQuota(quotaText(DEFAULT_REDEMPTION_QUOTA))
    if (id !== undefined) {
      setLoading(true)
      getRedemption(id).then((r) => {
        if (!live) return
        setName(r.name)
        setQuota(quotaText(r.quota))
      }, (err: unknown) => {
        if (!live) return
        notify.error(err)
        closeRef.current()
      }).finally(() => { if (live) setLoading(false) })
    }
    return () => { live = false }
    // The status (dollars or units) is read when the drawer opens; a change while open is not followed.
  }, [open, id, notify])

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
    setSaving(true)
    try {
      if (creating) {
        const keys = await createRedemptions({ name: name.trim(), quota: units, count: n })
        onCreated(keys, name.trim() === '' ? defaultCodeName(units, status) : name.trim())
      } else {
        await updateRedemption({ id, name: name.trim(), quota: units })
        notify.success(t('redemption.updated'))
        onSaved()
      }
    } catch (err) {
      notify.error(err)
    } finally {
      setSaving(false)
    }
  }

  const title = creating ? t('redemption.form.createTitle') : t('redemption.form.editTitle')
  return (
    <Drawer
      anchor='right'
      open={open}
      onClose={onClose}
      sx={{ zIndex: (theme) => theme.zIndex.modal }}
      slotProps={{ paper: { sx: { width: 440, maxWidth: '100%', '@media (max-width:600px)': { width: '100%' } } } }}
    >
      <Box component='form' noValidate aria-label={title} onSubmit={(e) => { void submit(e) }} sx={{ display: 'flex', flexDirection: 'column', height: '100%' }}>
        <Stack direction='row' sx={{ alignItems: 'center', px: 2, py: 1.5, borderBottom: 1, borderColor: 'divider' }}>
          <Typography variant='h6' component='h2' sx={{ flexGrow: 1 }}>{title}</Typography>
          <IconButton aria-label={t('common.close')} onClick={onClose}><CloseIcon /></IconButton>
        </Stack>
        {loading && <LinearProgress />}
        <Stack spacing={2.5} sx={{ p: 2, overflowY: 'auto', flexGrow: 1 }}>
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
        </Stack>
        <Stack direction='row' spacing={1} sx={{ justifyContent: 'flex-end', p: 2, borderTop: 1, borderColor: 'divider' }}>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type='submit' variant='contained' disabled={saving || loading}>{creating ? t('redemption.form.create') : t('common.save')}</Button>
        </Stack>
      </Box>
    </Drawer>
  )
}
