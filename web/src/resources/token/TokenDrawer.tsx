import type { CreatedTokenView, TokenView } from '@modelgate/contracts'
import Autocomplete from '@mui/material/Autocomplete'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import Drawer from '@mui/material/Drawer'
import FormControlLabel from '@mui/material/FormControlLabel'
import FormHelperText from '@mui/material/FormHelperText'
import IconButton from '@mui/material/IconButton'
import LinearProgress from '@mui/material/LinearProgress'
import MenuItem from '@mui/material/MenuItem'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import CloseIcon from '@mui/icons-material/Close'
import { type FormEvent, useEffect, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { renderQuota } from '../../lib/format'
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
  presetExpiry,
  QUOTA_PRESETS,
  type TokenForm,
  validate
} from './form'

export interface TokenDrawerProps {
  open: boolean
  /** The token to edit; undefined creates. */
  tokenId: number | undefined
  onClose: () => void
  /** After a save: the created tokens (with their full keys) when creating. */
  onSaved: (created: CreatedTokenView[] | undefined) => void
}

/** The create/edit form of SPEC.md section 2 (Token page); full width on small screens. */
export function TokenDrawer ({ open, tokenId, onClose, onSaved }: TokenDrawerProps) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const creating = tokenId === undefined
  const [form, setForm] = useState<TokenForm>(emptyForm)
  const [original, setOriginal] = useState<TokenView | undefined>()
  const [errors, setErrors] = useState<FormErrors>({})
  const [loading, setLoading] = useState(false)
  const [saving, setSaving] = useState(false)
  const [models, setModels] = useState<string[]>([])
  const [groups, setGroups] = useState<Record<string, GroupInfo>>({})
  // Read through a ref: a new onClose on each parent render must not reload the form.
  const closeRef = useRef(onClose)
  useEffect(() => { closeRef.current = onClose })

  // Until the token's values are in, the fields stay hidden: typing into the empty form would be overwritten.
  const waiting = tokenId !== undefined && original?.id !== tokenId

  useEffect(() => {
    if (!open) return
    let live = true
    setErrors({})
    setOriginal(undefined)
    setForm(emptyForm())
    userModels().then((m) => { if (live) setModels(m) }, (err: unknown) => { if (live) notify.error(err) })
    userGroups().then((g) => { if (live) setGroups(g) }, (err: unknown) => { if (live) notify.error(err) })
    if (tokenId !== undefined) {
      setLoading(true)
      getToken(tokenId).then((token) => {
        if (!live) return
        setOriginal(token)
        setForm(formOf(token))
      }, (err: unknown) => {
        if (!live) return
        notify.error(err)
        closeRef.current()
      }).finally(() => { if (live) setLoading(false) })
    }
    return () => { live = false }
  }, [open, tokenId, notify])

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
    setSaving(true)
    try {
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
    } catch (err) {
      notify.error(err)
    } finally {
      setSaving(false)
    }
  }

  const quota = Number(form.quota)
  const groupNames = Object.keys(groups)
  // A token may hold a group the user can no longer choose: keep it listed so the edit does not drop it.
  if (form.group !== '' && !groupNames.includes(form.group)) groupNames.push(form.group)
  const modelOptions = [...new Set([...models, ...form.models])]
  const label = (key: string) => t(key)

  return (
    <Drawer
      anchor='right'
      open={open}
      onClose={onClose}
      // Above the app bar (which sits over the sidebar drawer), so the title and close button show.
      sx={{ zIndex: (theme) => theme.zIndex.modal }}
      slotProps={{ paper: { sx: { width: { xs: '100%', sm: 600 } } } }}
    >
      <Box component='form' noValidate onSubmit={(e) => { void submit(e) }} sx={{ display: 'flex', flexDirection: 'column', height: '100%' }} aria-label={creating ? t('token.form.createTitle') : t('token.form.editTitle')}>
        <Stack direction='row' sx={{ alignItems: 'center', px: 2, py: 1.5, borderBottom: 1, borderColor: 'divider' }}>
          <Typography variant='h6' component='h2' sx={{ flexGrow: 1 }}>{creating ? t('token.form.createTitle') : t('token.form.editTitle')}</Typography>
          <IconButton aria-label={t('common.close')} onClick={onClose}><CloseIcon /></IconButton>
        </Stack>
        {(loading || waiting) && <LinearProgress />}
        <Stack spacing={2.5} sx={{ p: 2, overflowY: 'auto', flexGrow: 1, visibility: waiting ? 'hidden' : undefined }}>
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
            <Autocomplete
              multiple
              disableCloseOnSelect
              disabled={!form.modelLimitsEnabled}
              options={modelOptions}
              value={form.models}
              onChange={(_e, value) => { set('models', value) }}
              renderInput={(params) => <TextField {...params} label={t('token.form.models')} />}
            />
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
        </Stack>
        <Stack direction='row' spacing={1} sx={{ justifyContent: 'flex-end', px: 2, py: 1.5, borderTop: 1, borderColor: 'divider' }}>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type='submit' variant='contained' disabled={saving || loading || waiting}>
            {creating ? t('token.form.submitCreate') : t('token.form.submitEdit')}
          </Button>
        </Stack>
      </Box>
    </Drawer>
  )
}
