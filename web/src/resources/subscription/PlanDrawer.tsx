import Autocomplete from '@mui/material/Autocomplete'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import FormControlLabel from '@mui/material/FormControlLabel'
import IconButton from '@mui/material/IconButton'
import MenuItem from '@mui/material/MenuItem'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import AddIcon from '@mui/icons-material/Add'
import DeleteIcon from '@mui/icons-material/DeleteOutlineOutlined'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { FormDrawer } from '../../components/FormDrawer'
import { useNotify } from '../../components/Notify'
import { renderQuota } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { knownModels } from '../channel/api'
import { createPlan, updatePlan } from './api'
import { durationText } from './format'
import { checkPlan, emptyForm, formOf, ITEMS_MAX, type ItemForm, newItem, type PlanErrors, type PlanForm, type QuotaInput, unitsOf } from './planForm'
import { DURATION_UNITS, type PlanEntry, QUOTA_TYPES, type QuotaType } from './types'

export interface PlanDrawerProps {
  open: boolean
  /** The plan to edit (from the list); undefined creates one. */
  entry: PlanEntry | undefined
  onClose: () => void
  onSaved: () => void
}

const KIND_KEY = { 0: 'subscription.kind.quota', 1: 'subscription.kind.requests' } as const

/** Create and edit of a plan: its fields and the entitlement items each period includes. */
export function PlanDrawer ({ open, entry, onClose, onSaved }: PlanDrawerProps) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const creating = entry === undefined
  const q: QuotaInput = { dollars: status?.display_in_currency === true && (status.quota_per_unit ?? 0) > 0, perUnit: status?.quota_per_unit ?? 500_000 }
  const [form, setForm] = useState<PlanForm>(emptyForm)
  const [errors, setErrors] = useState<PlanErrors>({})
  const { act, busy: saving } = useAction()
  // Suggestions only: a model typed by hand is taken as it is.
  const models = useLoad(open ? knownModels : undefined, { initial: [], quiet: true }).data
  const entryId = entry?.plan.id

  useEffect(() => {
    if (!open) return
    setErrors({})
    setForm(entry === undefined ? emptyForm() : formOf(entry, q))
    // Filled when the drawer opens (or switches plans); a list reload meanwhile does not overwrite typing.
  }, [open, entryId])

  const set = <K extends keyof PlanForm>(key: K, value: PlanForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }))
    setErrors((e) => ({ ...e, [key]: undefined }))
  }
  const setItem = (key: number, patch: Partial<ItemForm>) => {
    setForm((f) => ({ ...f, items: f.items.map((x) => x.key === key ? { ...x, ...patch } : x) }))
    setErrors((e) => ({ ...e, rows: undefined, items: undefined }))
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    const { errors: found, body } = checkPlan(form, q)
    setErrors(found)
    if (body === undefined) {
      notify.error(t('subscription.form.fixErrors'))
      return
    }
    await act(async () => {
      if (entry === undefined) await createPlan(body)
      else await updatePlan(entry.plan.id, body)
      onSaved()
    }, { done: creating ? t('subscription.form.created') : t('subscription.form.saved') })
  }

  const err = (key: string | undefined) => key === undefined ? undefined : t(key)
  const value = Number(form.value)
  const custom = Number(form.custom)
  const period = form.unit === 'custom'
    ? (Number.isSafeInteger(custom) && custom >= 60 ? durationText({ duration_unit: 'custom', duration_value: 1, custom_seconds: custom }, t) : undefined)
    : (Number.isSafeInteger(value) && value >= 1 ? durationText({ duration_unit: form.unit, duration_value: value, custom_seconds: 0 }, t) : undefined)

  return (
    <FormDrawer
      open={open}
      title={creating ? t('subscription.form.createTitle') : t('subscription.form.editTitle')}
      width={600}
      onClose={onClose}
      onSubmit={submit}
      saving={saving}
      submitLabel={creating ? t('subscription.form.create') : t('common.save')}
    >
      <TextField
        label={t('subscription.form.title')} value={form.title} required autoFocus={creating}
        onChange={(e) => { set('title', e.target.value) }}
        error={errors.title !== undefined} helperText={err(errors.title)}
        slotProps={{ htmlInput: { maxLength: 128 } }}
      />
      <TextField
        label={t('subscription.form.subtitle')} value={form.subtitle}
        onChange={(e) => { set('subtitle', e.target.value) }} helperText={t('subscription.form.subtitleHelp')}
      />
      <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: '2fr 1fr' } }}>
        <TextField
          label={t('subscription.form.price')} value={form.price} required
          onChange={(e) => { set('price', e.target.value) }}
          error={errors.price !== undefined} helperText={err(errors.price) ?? t('subscription.form.priceHelp')}
          slotProps={{ htmlInput: { inputMode: 'decimal' } }}
        />
        <TextField
          label={t('subscription.form.currency')} value={form.currency} required
          onChange={(e) => { set('currency', e.target.value.toUpperCase()) }}
          error={errors.currency !== undefined} helperText={err(errors.currency)}
          slotProps={{ htmlInput: { maxLength: 3 } }}
        />
      </Box>
      <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' } }}>
        <TextField select label={t('subscription.form.unit')} value={form.unit} onChange={(e) => { set('unit', e.target.value as PlanForm['unit']) }}>
          {DURATION_UNITS.map((u) => <MenuItem key={u} value={u}>{t(`subscription.unit.${u}`)}</MenuItem>)}
        </TextField>
        {form.unit === 'custom'
          ? (
            <TextField
              label={t('subscription.form.customSeconds')} value={form.custom} required
              onChange={(e) => { set('custom', e.target.value) }}
              error={errors.custom !== undefined} helperText={err(errors.custom) ?? (period === undefined ? undefined : t('subscription.form.periodIs', { duration: period }))}
              slotProps={{ htmlInput: { inputMode: 'numeric' } }}
            />
            )
          : (
            <TextField
              label={t('subscription.form.value')} value={form.value} required
              onChange={(e) => { set('value', e.target.value) }}
              error={errors.value !== undefined} helperText={err(errors.value) ?? (period === undefined ? undefined : t('subscription.form.periodIs', { duration: period }))}
              slotProps={{ htmlInput: { inputMode: 'numeric' } }}
            />
            )}
      </Box>
      <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' }, alignItems: 'start' }}>
        <TextField
          label={t('subscription.form.sortOrder')} value={form.sort}
          onChange={(e) => { set('sort', e.target.value) }}
          error={errors.sort !== undefined} helperText={err(errors.sort) ?? t('subscription.form.sortHelp')}
          slotProps={{ htmlInput: { inputMode: 'numeric' } }}
        />
        <FormControlLabel
          sx={{ mt: 1 }}
          control={<Switch checked={form.enabled} onChange={(e) => { set('enabled', e.target.checked) }} />}
          label={t('subscription.form.enabled')}
        />
      </Box>

      <Box component='section' aria-label={t('subscription.form.items')}>
        <Typography variant='subtitle2'>{t('subscription.form.items')}</Typography>
        <Typography variant='body2' color={errors.items === undefined ? 'text.secondary' : 'error'} sx={{ mb: 1.5 }}>
          {err(errors.items) ?? t('subscription.form.itemsHelp')}
        </Typography>
        <Stack spacing={1.5}>
          {form.items.map((item, i) => (
            <ItemRow
              key={item.key} item={item} n={i + 1} models={models} q={q}
              errors={errors.rows?.[i]}
              onChange={(patch) => { setItem(item.key, patch) }}
              onRemove={form.items.length > 1 ? () => { set('items', form.items.filter((x) => x.key !== item.key)) } : undefined}
            />
          ))}
        </Stack>
        <Button
          size='small' startIcon={<AddIcon />} sx={{ mt: 1 }} disabled={form.items.length >= ITEMS_MAX}
          onClick={() => { set('items', [...form.items, newItem()]) }}
        >
          {t('subscription.form.addItem')}
        </Button>
      </Box>

      <Box component='section' aria-label={t('subscription.form.payments')}>
        <Typography variant='subtitle2' sx={{ mb: 1.5 }}>{t('subscription.form.payments')}</Typography>
        <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' } }}>
          <TextField size='small' label={t('subscription.form.stripePriceId')} value={form.stripe} onChange={(e) => { set('stripe', e.target.value) }} />
          <TextField size='small' label={t('subscription.form.creemProductId')} value={form.creem} onChange={(e) => { set('creem', e.target.value) }} />
        </Box>
      </Box>
    </FormDrawer>
  )
}

interface ItemRowProps {
  item: ItemForm
  /** 1-based, for the fields' names. */
  n: number
  models: string[]
  q: QuotaInput
  errors: { model?: string, amount?: string } | undefined
  onChange: (patch: Partial<ItemForm>) => void
  /** Undefined: the last item cannot go. */
  onRemove: (() => void) | undefined
}

function ItemRow ({ item, n, models, q, errors, onChange, onRemove }: ItemRowProps) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const units = unitsOf(item.amount, item.kind, q)
  const money = item.kind === 0 && q.dollars
  const help = errors?.amount !== undefined
    ? t(errors.amount)
    : item.kind === 1
      ? t('subscription.form.amountRequestsHelp')
      : money
        ? t('subscription.form.amountDollarsHelp', { units: units ?? '-' })
        : t('subscription.form.amountUnitsHelp', { shown: units === undefined ? '-' : renderQuota(units, status) })
  const changeKind = (kind: QuotaType) => {
    // The amount keeps its meaning across the switch: quota units ↔ requests are not comparable, so it is cleared.
    onChange({ kind, amount: kind === item.kind ? item.amount : '' })
  }
  return (
    <Paper variant='outlined' sx={{ p: 1.5 }} data-testid={`plan-item-${n}`}>
      <Box sx={{ display: 'grid', gap: 1.5, gridTemplateColumns: { xs: 'minmax(0, 1fr) auto', sm: 'minmax(0, 1.6fr) minmax(0, 1fr) minmax(0, 1.2fr) auto' }, alignItems: 'start' }}>
        <Autocomplete
          freeSolo
          options={models}
          inputValue={item.model}
          onInputChange={(_e, value) => { onChange({ model: value }) }}
          renderInput={(params) => (
            <TextField
              {...params} size='small' label={t('subscription.form.model', { n })}
              error={errors?.model !== undefined} helperText={errors?.model === undefined ? undefined : t(errors.model)}
            />
          )}
          sx={{ minWidth: 0 }}
        />
        <Box sx={{ display: { xs: 'flex', sm: 'none' }, justifyContent: 'flex-end' }}>
          <RemoveButton n={n} onRemove={onRemove} />
        </Box>
        <TextField select size='small' sx={{ gridColumn: { xs: '1 / -1', sm: 'auto' } }} label={t('subscription.form.kind')} value={String(item.kind)} onChange={(e) => { changeKind(Number(e.target.value) as QuotaType) }}>
          {QUOTA_TYPES.map((k) => <MenuItem key={k} value={String(k)}>{t(KIND_KEY[k])}</MenuItem>)}
        </TextField>
        <TextField
          size='small' sx={{ gridColumn: { xs: '1 / -1', sm: 'auto' } }}
          label={money ? t('subscription.form.amountDollars') : t('subscription.form.amount')} value={item.amount}
          onChange={(e) => { onChange({ amount: e.target.value }) }}
          error={errors?.amount !== undefined} helperText={help}
          slotProps={{ htmlInput: { inputMode: money ? 'decimal' : 'numeric' } }}
        />
        <Box sx={{ display: { xs: 'none', sm: 'block' } }}>
          <RemoveButton n={n} onRemove={onRemove} />
        </Box>
      </Box>
    </Paper>
  )
}

function RemoveButton ({ n, onRemove }: { n: number, onRemove: (() => void) | undefined }) {
  const { t } = useTranslation()
  return (
    <IconButton size='small' aria-label={t('subscription.form.removeItem', { n })} disabled={onRemove === undefined} onClick={onRemove}>
      <DeleteIcon fontSize='small' />
    </IconButton>
  )
}
