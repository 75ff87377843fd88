import type { CreatedTokenView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import FormControlLabel from '@mui/material/FormControlLabel'
import FormHelperText from '@mui/material/FormHelperText'
import FormLabel from '@mui/material/FormLabel'
import MenuItem from '@mui/material/MenuItem'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import TextField from '@mui/material/TextField'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { FormDrawer } from '../../components/FormDrawer'
import { MultiSelect } from '../../components/MultiSelect'
import { useNotify } from '../../components/Notify'
import { renderQuota } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { useRecord } from '../../lib/useRecord'
import { createTokens, getToken, type GroupInfo, updateToken, userGroups, userModels } from './api'
import {
  BATCH_PRESETS,
  bodyOf,
  countOf,
  emptyForm,
  EXPIRY_PRESETS,
  type ExpiryPreset,
  type FormErrors,
  formOf,
  LIMIT_FIELDS,
  presetExpiry,
  QUOTA_PRESETS,
  type TokenForm,
  validate
} from './form'

const NO_GROUPS: Record<string, GroupInfo> = {}

export interface TokenDrawerProps {
  open: boolean
  /** The token to edit; undefined creates. */
  tokenId: number | undefined
  onClose: () => void
  /** After a save: the created tokens (with their full keys) when creating. */
  onSaved: (created: CreatedTokenView[] | undefined) => void
}

/** The create/edit form (Token page); full width on small screens. */
export function TokenDrawer ({ open, tokenId, onClose, onSaved }: TokenDrawerProps) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const creating = tokenId === undefined
  const [form, setForm] = useState<TokenForm>(emptyForm)
  const [errors, setErrors] = useState<FormErrors>({})
  const { act, busy: saving } = useAction()
  // Read each time the drawer opens.
  const models = useLoad(open ? userModels : undefined, { initial: [] }).data
  const groups = useLoad(open ? userGroups : undefined, { initial: NO_GROUPS }).data
  // Until the token's values are in (waiting), the fields stay hidden: typing into the empty form would be overwritten.
  const { record: original, loading, waiting } = useRecord(open, tokenId, getToken, { onLoad: (token) => { setForm(formOf(token)) }, onFail: onClose })

  useEffect(() => {
    if (!open) return
    setErrors({})
    setForm(emptyForm())
  }, [open, tokenId])

  const set = <K extends keyof TokenForm>(key: K, value: TokenForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }))
    setErrors((e) => ({ ...e, [key === 'unlimited' ? 'quota' : key]: undefined }))
  }
  const setExpiry = (preset: ExpiryPreset) => { set('expiry', presetExpiry(preset)) }

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    const found = validate(form, creating, original)
    setErrors(found)
    if (Object.keys(found).length > 0) {
      notify.error(t('token.form.fixErrors'))
      return
    }
    await act(async () => {
      const body = bodyOf(form)
      if (creating) {
        onSaved(await createTokens({ ...body, count: countOf(form) }))
      } else {
        // On edit a cleared name keeps the old one (the name is required on create only).
        const { name, ...rest } = body
        await updateToken({ id: tokenId, ...rest, ...(name === '' ? {} : { name }) })
        notify.success(t('token.updated'))
        onSaved(undefined)
      }
    })
  }

  const quota = Number(form.quota)
  const groupNames = Object.keys(groups)
  // A token may hold a group the user can no longer choose: keep it listed so the edit does not drop it.
  if (form.group !== '' && !groupNames.includes(form.group)) groupNames.push(form.group)
  const modelOptions = [...new Set([...models, ...form.models])]
  const label = (key: string) => t(key)

  return (
    <FormDrawer
      open={open}
      title={creating ? t('token.form.createTitle') : t('token.form.editTitle')}
      width={600}
      onClose={onClose}
      onSubmit={submit}
      loading={loading}
      waiting={waiting}
      saving={saving}
      submitLabel={creating ? t('token.form.submitCreate') : t('token.form.submitEdit')}
    >
      <TextField
        label={t('token.form.name')}
        value={form.name}
        required={creating}
        autoFocus={creating}
        onChange={(e) => { set('name', e.target.value) }}
        error={errors.name !== undefined}
        helperText={errors.name === undefined ? undefined : label(errors.name)}
        slotProps={{ htmlInput: { maxLength: 50 } }}
      />

      <Box>
        <TextField
          label={t('token.form.expiry')}
          value={form.expiry}
          fullWidth
          placeholder={t('token.form.never')}
          onChange={(e) => { set('expiry', e.target.value) }}
          error={errors.expiry !== undefined}
          helperText={errors.expiry === undefined ? t('token.form.expiryHelp') : label(errors.expiry)}
          slotProps={{ inputLabel: { shrink: true } }}
        />
        <Stack direction='row' spacing={1} useFlexGap sx={{ mt: 1, flexWrap: 'wrap' }}>
          {EXPIRY_PRESETS.map((p) => (
            <Button key={p} size='small' variant='outlined' onClick={() => { setExpiry(p) }}>
              {p === 'never' ? t('token.form.never') : p === 'minute' ? t('token.form.minute') : p === 'hour' ? t('token.form.hour') : p === 'day' ? t('token.form.day') : t('token.form.month')}
            </Button>
          ))}
        </Stack>
      </Box>

      <Box>
        <FormControlLabel
          control={<Switch checked={form.unlimited} onChange={(e) => { set('unlimited', e.target.checked) }} />}
          label={t('token.form.unlimited')}
        />
        {form.unlimited && <FormHelperText>{t('token.form.unlimitedHelp')}</FormHelperText>}
      </Box>

      <Box>
        <TextField
          label={t('token.form.quota')}
          value={form.quota}
          fullWidth
          disabled={form.unlimited}
          onChange={(e) => { set('quota', e.target.value) }}
          error={errors.quota !== undefined}
          helperText={errors.quota !== undefined
            ? label(errors.quota)
            : t('token.form.quotaHelp', { shown: Number.isFinite(quota) ? renderQuota(quota, status) : '-' })}
          slotProps={{ htmlInput: { inputMode: 'numeric' } }}
        />
        <Stack direction='row' spacing={1} useFlexGap sx={{ mt: 1, flexWrap: 'wrap' }}>
          {QUOTA_PRESETS.map((q) => (
            <Chip
              key={q}
              label={renderQuota(q, status, 0)}
              disabled={form.unlimited}
              color={form.quota === String(q) ? 'primary' : 'default'}
              onClick={() => { set('quota', String(q)) }}
            />
          ))}
        </Stack>
      </Box>

      {creating && (
        <Box>
          <TextField
            label={t('token.form.count')}
            value={form.count}
            fullWidth
            onChange={(e) => { set('count', e.target.value) }}
            error={errors.count !== undefined}
            helperText={errors.count === undefined ? t('token.form.countHelp') : label(errors.count)}
            slotProps={{ htmlInput: { inputMode: 'numeric' } }}
          />
          <Stack direction='row' spacing={1} useFlexGap sx={{ mt: 1, flexWrap: 'wrap' }}>
            {BATCH_PRESETS.map((n) => (
              <Chip key={n} label={n} color={form.count === String(n) ? 'primary' : 'default'} onClick={() => { set('count', String(n)) }} />
            ))}
          </Stack>
        </Box>
      )}

      <TextField
        label={t('token.form.allowIps')}
        value={form.allowIps}
        multiline
        minRows={2}
        placeholder={'203.0.113.7\n10.0.0.0/8'}
        helperText={t('token.form.allowIpsHelp')}
        onChange={(e) => { set('allowIps', e.target.value) }}
      />

      <Box>
        <FormControlLabel
          control={<Switch checked={form.modelLimitsEnabled} onChange={(e) => { set('modelLimitsEnabled', e.target.checked) }} />}
          label={t('token.form.modelLimits')}
        />
        <FormHelperText sx={{ mb: 1 }}>{t('token.form.modelLimitsHelp')}</FormHelperText>
        <MultiSelect
          label={t('token.form.models')} disabled={!form.modelLimitsEnabled}
          options={modelOptions} value={form.models} onChange={(value) => { set('models', value) }}
        />
      </Box>

      <Box component='fieldset' sx={{ border: 0, m: 0, p: 0, minWidth: 0 }}>
        <FormLabel component='legend'>{t('token.form.limits')}</FormLabel>
        <FormHelperText sx={{ mt: 0, mb: 1.5 }}>{t('token.form.limitsHelp')}</FormHelperText>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5}>
          {LIMIT_FIELDS.map((field) => (
            <TextField
              key={field}
              label={t(`token.form.${field}`)}
              value={form[field]}
              onChange={(e) => { set(field, e.target.value) }}
              error={errors[field] !== undefined}
              helperText={errors[field] === undefined ? undefined : label(errors[field])}
              sx={{ flex: 1, minWidth: 0 }}
              slotProps={{ htmlInput: { inputMode: 'numeric' } }}
            />
          ))}
        </Stack>
      </Box>

      <TextField
        select
        label={t('token.form.group')}
        value={form.group}
        onChange={(e) => { set('group', e.target.value) }}
        slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
      >
        <MenuItem value=''>{t('token.form.ownGroup')}</MenuItem>
        {groupNames.map((g) => (
          <MenuItem key={g} value={g}>
            {t('token.form.groupOption', { desc: groups[g]?.desc ?? g, ratio: groups[g]?.ratio ?? 1 })}
          </MenuItem>
        ))}
      </TextField>
    </FormDrawer>
  )
}
