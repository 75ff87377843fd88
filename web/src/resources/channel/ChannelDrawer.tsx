import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import FormControlLabel from '@mui/material/FormControlLabel'
import FormHelperText from '@mui/material/FormHelperText'
import FormLabel from '@mui/material/FormLabel'
import IconButton from '@mui/material/IconButton'
import MenuItem from '@mui/material/MenuItem'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import AddIcon from '@mui/icons-material/Add'
import DeleteIcon from '@mui/icons-material/DeleteOutlineOutlined'
import EastIcon from '@mui/icons-material/East'
import VisibilityIcon from '@mui/icons-material/VisibilityOutlined'
import { CHANNEL_TYPE, type MultiKeyMode } from '@modelgate/contracts'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { FormDrawer } from '../../components/FormDrawer'
import { MultiSelect } from '../../components/MultiSelect'
import { useNotify } from '../../components/Notify'
import { useVerification } from '../../components/VerifyDialog'
import { useRecord } from '../../lib/useRecord'
import { useAuth } from '../../auth/AuthContext'
import { createChannels, defaultModels, fetchModels, fetchSavedModels, getChannel, knownModels, pricedModels, revealChannelKey, updateChannel } from './api'
import {
  baseUrlKind,
  bodyOf,
  type ChannelForm,
  emptyForm,
  type FormErrors,
  type FormField,
  formOf,
  hasSetting,
  isMultiKey,
  jsonKey,
  MAPPING_TEMPLATE,
  type MappingRow,
  KEY_HINT_TYPES,
  otherKind,
  OTHER_DEFAULTS,
  relatedModels,
  splitNames,
  validate
} from './form'
import { PriorityWeightFields } from './PriorityWeightFields'
import { UnpricedNote } from './UnpricedNote'

export interface ChannelDrawerProps {
  open: boolean
  /** The channel to edit; undefined creates. */
  channelId: number | undefined
  /** Channel type number (as text) -> name. */
  types: Record<string, string>
  groups: string[]
  onClose: () => void
  onSaved: () => void
}

/** The create/edit form (Channel edit drawer, 600 px; full width on small screens). */
export function ChannelDrawer ({ open, channelId, types, groups, onClose, onSaved }: ChannelDrawerProps) {
  const { t } = useTranslation()
  const notify = useNotify()
  const creating = channelId === undefined
  const [form, setForm] = useState<ChannelForm>(emptyForm)
  const [priced, setPriced] = useState<ReadonlySet<string>>()
  const [errors, setErrors] = useState<FormErrors>({})
  const [saving, setSaving] = useState(false)
  const [fetching, setFetching] = useState(false)
  const [defaults, setDefaults] = useState<Record<string, string[]>>({})
  const [allModels, setAllModels] = useState<string[]>([])
  const [custom, setCustom] = useState('')
  // The stored key, only once root revealed it (after verifying again); dropped when the drawer closes.
  const [storedKey, setStoredKey] = useState<string | undefined>()
  const isRoot = (useAuth().user?.role ?? 0) >= 100
  const { withVerification } = useVerification()
  // Until the channel's values are in (waiting), the fields stay hidden so nobody reads or types
  // into an empty form that the load is about to overwrite.
  const { loading, waiting } = useRecord(open, channelId, getChannel, { onLoad: (channel) => { setForm(formOf(channel)) }, onFail: onClose })

  useEffect(() => {
    // A revealed key is dropped as soon as the drawer closes, not kept until it opens again.
    setStoredKey(undefined)
    if (!open) return
    let live = true
    setErrors({})
    setForm(emptyForm())
    setCustom('')
    // A new channel starts with no models: the operator picks them, or fills its type's models
    // (or every model) with the buttons; nothing is served that nobody chose.
    defaultModels().then((d) => { if (live) setDefaults(d) }, (err: unknown) => { if (live) notify.error(err) })
    knownModels().then((m) => { if (live) setAllModels(m) }, (err: unknown) => { if (live) notify.error(err) })
    setPriced(undefined)
    pricedModels().then((m) => { if (live) setPriced(new Set(m)) }, (err: unknown) => { if (live) notify.error(err) })
    return () => { live = false }
  }, [open, channelId, notify])

  const set = <K extends keyof ChannelForm>(key: K, value: ChannelForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }))
    if (key in errors) setErrors((e) => ({ ...e, [key]: undefined }))
  }

  /**
   * A type change leaves the chosen models alone, except the previous type's full list filled by
   * "Fill related models" and left untouched, which becomes the new type's list; a type-specific
   * `other` does not carry over to a type where it means something else.
   */
  const changeType = (type: number) => {
    setForm((f) => {
      const previous = relatedModels(f.type, defaults)
      const untouched = f.models.length > 0 && f.models.length === previous.length && f.models.every((m, i) => m === previous[i])
      return {
        ...f,
        type,
        models: untouched ? [...relatedModels(type, defaults)] : f.models,
        other: otherKind(type) === otherKind(f.type) ? f.other : ''
      }
    })
    setErrors((e) => ({ ...e, models: undefined, other: undefined, key: undefined, setting: undefined }))
  }

  const addModels = (names: string[]) => { set('models', [...new Set([...form.models, ...names])]) }

  const addCustom = () => {
    const names = splitNames(custom)
    if (names.length === 0) return
    // docs/domain.md: adding a model that is already chosen is refused.
    const existing = names.filter((n) => form.models.includes(n))
    if (existing.length > 0) {
      notify.error(t('channel.form.modelExists', { names: existing.join(', ') }))
      return
    }
    addModels(names)
    setCustom('')
  }

  const fillAll = async () => {
    try {
      const names = await knownModels()
      setAllModels(names)
      addModels(names)
    } catch (err) {
      notify.error(err)
    }
  }

  const fetchList = async () => {
    // A saved channel with the key left blank lists with its stored key; otherwise the typed one is needed.
    const typedKey = form.key.trim()
    if (typedKey === '' && creating) {
      notify.error(t('channel.form.error.key'))
      setErrors((e) => ({ ...e, key: 'channel.form.error.key' }))
      return
    }
    setFetching(true)
    try {
      const names = typedKey === '' && channelId !== undefined
        ? await fetchSavedModels(channelId)
        : await fetchModels({ type: form.type, base_url: form.baseUrl.trim().replace(/\/+$/, ''), key: typedKey, proxy_url: form.proxyUrl.trim() })
      set('models', [...new Set(names)])
      setAllModels((all) => [...new Set([...all, ...names])].sort())
      notify.success(t('channel.form.modelsFetched', { count: names.length }))
    } catch (err) {
      const reason = err instanceof Error ? err.message : ''
      notify.error(reason === '' ? t('channel.form.fetchFailed') : reason)
    } finally {
      setFetching(false)
    }
  }

  const showKey = async () => {
    if (channelId === undefined) return
    try {
      // The server wants a fresh verification first: the dialog asks for it, then the call is repeated.
      setStoredKey(await withVerification(async () => await revealChannelKey(channelId)))
    } catch (err) {
      notify.error(err)
    }
  }

  const setRow = (i: number, row: MappingRow) => { set('mapping', form.mapping.map((r, j) => j === i ? row : r)) }
  const addTemplate = () => {
    if (form.mapping.some((r) => r.from.trim() === MAPPING_TEMPLATE.from)) return
    set('mapping', [...form.mapping.filter((r) => r.from.trim() !== '' || r.to.trim() !== ''), { ...MAPPING_TEMPLATE }])
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    const found = validate(form, creating)
    setErrors(found)
    const first = Object.values(found)[0]
    if (first !== undefined) {
      notify.error(t(first))
      return
    }
    setSaving(true)
    try {
      const body = bodyOf(form)
      if (creating) {
        const made = await createChannels(form.batch ? { ...body, mode: 'batch' } : body)
        notify.success(made.length === 1 ? t('channel.form.created') : t('channel.form.createdMany', { count: made.length }))
      } else {
        await updateChannel({ id: channelId, ...body })
        notify.success(t('channel.form.updated'))
      }
      onSaved()
    } catch (err) {
      notify.error(err)
    } finally {
      setSaving(false)
    }
  }

  const typeOptions = Object.entries(types).map(([id, name]) => ({ id: Number(id), name })).sort((a, b) => a.id - b.id)
  // A stored type the server no longer names stays selectable, so an edit does not change it silently.
  if (!typeOptions.some((o) => o.id === form.type)) typeOptions.push({ id: form.type, name: t('channel.unknownType', { type: form.type }) })
  const groupOptions = [...new Set([...groups, ...form.groups])]
  const modelOptions = [...new Set([...relatedModels(form.type, defaults), ...allModels, ...form.models])]
  const err = (field: FormField) => errors[field] === undefined ? undefined : t(errors[field])
  const help = (field: FormField, text: string) => err(field) ?? text
  const kind = baseUrlKind(form.type)
  const other = otherKind(form.type)
  const title = creating ? t('channel.form.createTitle') : t('channel.form.editTitle')

  const baseUrlLabel = {
    azure: [t('channel.form.azureEndpoint'), t('channel.form.azureEndpointHelp')],
    custom: [t('channel.form.customUrl'), t('channel.form.customUrlHelp')],
    fastgpt: [t('channel.form.fastgptUrl'), t('channel.form.fastgptUrlHelp')],
    suno: [t('channel.form.sunoUrl'), t('channel.form.sunoUrlHelp')],
    codex: [t('channel.form.codexUrl'), t('channel.form.codexUrlHelp')],
    generic: [t('channel.form.baseUrl'), t('channel.form.baseUrlHelp')]
  }[kind]
  const otherLabel = other === undefined
    ? undefined
    : {
        azureVersion: [t('channel.form.azureVersion'), t('channel.form.azureVersionHelp')],
        sparkVersion: [t('channel.form.sparkVersion'), t('channel.form.sparkVersionHelp')],
        vertexRegion: [t('channel.form.vertexRegion'), t('channel.form.vertexRegionHelp')],
        knowledgeBase: [t('channel.form.knowledgeBase'), t('channel.form.knowledgeBaseHelp')],
        accountId: [t('channel.form.accountId'), t('channel.form.accountIdHelp')],
        awsRegion: [t('channel.form.awsRegion'), t('channel.form.awsRegionHelp')],
        tencentRegion: [t('channel.form.tencentRegion'), t('channel.form.tencentRegionHelp')],
        difyMode: [t('channel.form.difyMode'), t('channel.form.difyModeHelp')]
      }[other]
  const keyLabel = jsonKey(form.type) ? t('channel.form.keyJson') : form.batch ? t('channel.form.keyBatch') : t('channel.form.key')
  const keyHelp = !creating
    ? t('channel.form.keyEditHelp')
    : jsonKey(form.type) ? t('channel.form.keyJsonHelp') : form.batch ? t('channel.form.keyBatchHelp') : KEY_HINT_TYPES.includes(form.type) ? t(`channel.form.keyHint.t${form.type}`) : t('channel.form.keyHelp')

  return (
    <FormDrawer
      open={open}
      title={title}
      width={600}
      onClose={onClose}
      onSubmit={submit}
      loading={loading}
      waiting={waiting}
      saving={saving}
      submitLabel={creating ? t('channel.form.submitCreate') : t('channel.form.submitEdit')}
    >
      <TextField
        select
        label={t('channel.form.type')}
        value={typeOptions.length === 0 ? '' : form.type}
        onChange={(e) => { changeType(Number(e.target.value)) }}
      >
        {typeOptions.map((o) => <MenuItem key={o.id} value={o.id}>{o.name}</MenuItem>)}
      </TextField>

      <TextField
        label={baseUrlLabel[0]}
        value={form.baseUrl}
        onChange={(e) => { set('baseUrl', e.target.value) }}
        error={errors.baseUrl !== undefined}
        helperText={help('baseUrl', baseUrlLabel[1]!)}
        placeholder={kind === 'custom' ? 'https://api.example.com/v1/{model}/chat/completions' : 'https://'}
        slotProps={{ inputLabel: { shrink: true } }}
      />
      {otherLabel !== undefined && (
        <TextField
          label={otherLabel[0]}
          value={form.other}
          multiline={other === 'vertexRegion'}
          minRows={other === 'vertexRegion' ? 2 : undefined}
          placeholder={OTHER_DEFAULTS[form.type]}
          onChange={(e) => { set('other', e.target.value) }}
          error={errors.other !== undefined}
          helperText={help('other', otherLabel[1]!)}
          slotProps={{ inputLabel: { shrink: true } }}
        />
      )}

      <TextField
        label={t('channel.form.name')}
        value={form.name}
        required
        placeholder={t('channel.form.namePlaceholder')}
        onChange={(e) => { set('name', e.target.value) }}
        error={errors.name !== undefined}
        helperText={err('name')}
        slotProps={{ htmlInput: { maxLength: 200 } }}
      />

      <MultiSelect
        label={t('channel.form.groups')} options={groupOptions} value={form.groups} onChange={(value) => { set('groups', value) }}
        required error={errors.groups !== undefined} helperText={help('groups', t('channel.form.groupsHelp'))}
      />

      <Box>
        <MultiSelect
          label={t('channel.form.models')} options={modelOptions} value={form.models} onChange={(value) => { set('models', value) }}
          required error={errors.models !== undefined} helperText={help('models', t('channel.form.modelsHelp'))}
        />
        <UnpricedNote models={form.models} priced={priced} />
        <Stack direction='row' spacing={1} useFlexGap sx={{ mt: 1, flexWrap: 'wrap' }}>
          <Button size='small' variant='outlined' onClick={() => { addModels(relatedModels(form.type, defaults)) }}>{t('channel.form.fillRelated')}</Button>
          <Button size='small' variant='outlined' onClick={() => { void fillAll() }}>{t('channel.form.fillAll')}</Button>
          <Button size='small' variant='outlined' disabled={fetching} onClick={() => { void fetchList() }}>{t('channel.form.fetchModels')}</Button>
          <Button size='small' color='warning' onClick={() => { set('models', []) }}>{t('channel.form.clearModels')}</Button>
        </Stack>
        <Stack direction='row' spacing={1} sx={{ mt: 1.5, alignItems: 'flex-start' }}>
          <TextField
            size='small'
            label={t('channel.form.customModel')}
            helperText={t('channel.form.customModelHelp')}
            value={custom}
            onChange={(e) => { setCustom(e.target.value) }}
            onKeyDown={(e) => { if (e.key === 'Enter') { e.preventDefault(); addCustom() } }}
            sx={{ flex: 1, minWidth: 0 }}
          />
          <Button variant='outlined' startIcon={<AddIcon />} onClick={addCustom}>{t('channel.form.addCustom')}</Button>
        </Stack>
      </Box>

      <Box>
        <FormLabel component='div'>{t('channel.form.mapping')}</FormLabel>
        <FormHelperText sx={{ mt: 0, mb: 1 }}>{t('channel.form.mappingHelp')}</FormHelperText>
        <Stack spacing={1}>
          {form.mapping.map((row, i) => (
            <Stack key={i} direction='row' spacing={1} sx={{ alignItems: 'center' }}>
              <TextField
                size='small'
                placeholder={t('channel.form.mappingFrom')}
                value={row.from}
                onChange={(e) => { setRow(i, { ...row, from: e.target.value }) }}
                sx={{ flex: 1, minWidth: 0 }}
                slotProps={{ htmlInput: { 'aria-label': t('channel.form.mappingFromOf', { n: i + 1 }) } }}
              />
              <EastIcon fontSize='small' color='action' />
              <TextField
                size='small'
                placeholder={t('channel.form.mappingTo')}
                value={row.to}
                onChange={(e) => { setRow(i, { ...row, to: e.target.value }) }}
                sx={{ flex: 1, minWidth: 0 }}
                slotProps={{ htmlInput: { 'aria-label': t('channel.form.mappingToOf', { n: i + 1 }) } }}
              />
              <IconButton size='small' aria-label={t('channel.form.mappingRemove', { n: i + 1 })} onClick={() => { set('mapping', form.mapping.filter((_r, j) => j !== i)) }}>
                <DeleteIcon fontSize='small' />
              </IconButton>
            </Stack>
          ))}
        </Stack>
        <Stack direction='row' spacing={1} useFlexGap sx={{ mt: 1, flexWrap: 'wrap' }}>
          <Button size='small' variant='outlined' startIcon={<AddIcon />} onClick={() => { set('mapping', [...form.mapping, { from: '', to: '' }]) }}>{t('channel.form.mappingAdd')}</Button>
          <Button size='small' variant='outlined' onClick={addTemplate}>{t('channel.form.mappingTemplate')}</Button>
          <Button size='small' color='warning' onClick={() => { set('mapping', []) }}>{t('channel.form.mappingClear')}</Button>
        </Stack>
      </Box>

      {creating && (
        <Box>
          <FormControlLabel control={<Switch checked={form.batch} onChange={(e) => { set('batch', e.target.checked) }} />} label={t('channel.form.batch')} />
          <FormHelperText sx={{ mt: 0 }}>{t('channel.form.batchHelp')}</FormHelperText>
        </Box>
      )}
      <Box>
        <TextField
          label={keyLabel}
          value={form.key}
          required={creating}
          fullWidth
          multiline
          minRows={form.batch || jsonKey(form.type) ? 4 : 1}
          autoComplete='off'
          onChange={(e) => { set('key', e.target.value) }}
          error={errors.key !== undefined}
          helperText={help('key', keyHelp)}
          slotProps={{ htmlInput: { spellCheck: false } }}
        />
        {!creating && (
          <Stack direction='row' data-testid='stored-key-hint' sx={{ mt: 1, alignItems: 'center', gap: 1, flexWrap: 'wrap' }}>
            <Typography variant='body2' color='text.secondary' sx={{ overflowWrap: 'anywhere' }}>
              {form.storedKeyCount > 1
                ? t('channel.form.storedHintMany', { count: form.storedKeyCount, hint: form.storedKeyHint })
                : t('channel.form.storedHint', { hint: form.storedKeyHint === '' ? '-' : form.storedKeyHint })}
            </Typography>
            {isRoot && storedKey === undefined && (
              <Button size='small' startIcon={<VisibilityIcon />} onClick={() => { void showKey() }}>{t('channel.form.showKey')}</Button>
            )}
          </Stack>
        )}
        {!creating && storedKey !== undefined && (
          <TextField
            label={t('channel.form.storedKey')}
            value={storedKey}
            fullWidth
            multiline
            size='small'
            sx={{ mt: 1.5 }}
            helperText={t('channel.form.revealHelp')}
            slotProps={{ htmlInput: { readOnly: true, spellCheck: false } }}
          />
        )}
      </Box>

      {isMultiKey(form) && (
        <TextField
          select
          label={t('channel.form.multiKeyMode')}
          value={form.multiKeyMode}
          onChange={(e) => { set('multiKeyMode', e.target.value as MultiKeyMode) }}
          helperText={t('channel.form.multiKeyModeHelp')}
        >
          <MenuItem value='random'>{t('channel.form.multiKeyRandom')}</MenuItem>
          <MenuItem value='polling'>{t('channel.form.multiKeyPolling')}</MenuItem>
        </TextField>
      )}

      {form.type === CHANNEL_TYPE.openai && (
        <TextField
          label={t('channel.form.organization')}
          value={form.organization}
          placeholder='org-...'
          onChange={(e) => { set('organization', e.target.value) }}
          helperText={t('channel.form.organizationHelp')}
        />
      )}

      <TextField
        label={t('channel.form.testModel')}
        value={form.testModel}
        onChange={(e) => { set('testModel', e.target.value) }}
        helperText={t('channel.form.testModelHelp')}
      />

      <TextField
        label={t('channel.form.maxInputTokens')}
        value={form.maxInputTokens}
        onChange={(e) => { set('maxInputTokens', e.target.value) }}
        error={errors.maxInputTokens !== undefined}
        helperText={help('maxInputTokens', t('channel.form.maxInputTokensHelp'))}
        slotProps={{ htmlInput: { inputMode: 'numeric' } }}
      />

      <Box>
        <FormControlLabel control={<Switch checked={form.autoBan} onChange={(e) => { set('autoBan', e.target.checked) }} />} label={t('channel.form.autoBan')} />
        <FormHelperText sx={{ mt: 0 }}>{t('channel.form.autoBanHelp')}</FormHelperText>
      </Box>

      <TextField
        label={t('channel.form.statusCodeMapping')}
        value={form.statusCodeMapping}
        multiline
        minRows={2}
        placeholder={'{\n  "400": "500"\n}'}
        onChange={(e) => { set('statusCodeMapping', e.target.value) }}
        error={errors.statusCodeMapping !== undefined}
        helperText={help('statusCodeMapping', t('channel.form.statusCodeMappingHelp'))}
        slotProps={{ htmlInput: { spellCheck: false }, inputLabel: { shrink: true } }}
      />

      <TextField label={t('channel.form.tag')} value={form.tag} onChange={(e) => { set('tag', e.target.value) }} helperText={t('channel.form.tagHelp')} />
      <PriorityWeightFields
        values={form} onChange={set} errors={errors}
        help={{ priority: help('priority', t('channel.form.priorityHelp')), weight: help('weight', t('channel.form.weightHelp')) }}
      />

      <TextField
        label={t('channel.form.proxyUrl')}
        value={form.proxyUrl}
        placeholder='socks5://user:password@127.0.0.1:1080'
        onChange={(e) => { set('proxyUrl', e.target.value) }}
        error={errors.proxyUrl !== undefined}
        helperText={help('proxyUrl', t('channel.form.proxyUrlHelp'))}
        slotProps={{ inputLabel: { shrink: true } }}
      />

      <TextField
        label={t('channel.form.paramOverride')}
        value={form.paramOverride}
        multiline
        minRows={2}
        placeholder={'{\n  "temperature": 0.3\n}'}
        onChange={(e) => { set('paramOverride', e.target.value) }}
        error={errors.paramOverride !== undefined}
        helperText={help('paramOverride', t('channel.form.paramOverrideHelp'))}
        slotProps={{ htmlInput: { spellCheck: false }, inputLabel: { shrink: true } }}
      />
      <TextField
        label={t('channel.form.headerOverride')}
        value={form.headerOverride}
        multiline
        minRows={2}
        placeholder={'{\n  "Authorization": "Bearer {api_key}"\n}'}
        onChange={(e) => { set('headerOverride', e.target.value) }}
        error={errors.headerOverride !== undefined}
        helperText={help('headerOverride', t('channel.form.headerOverrideHelp'))}
        slotProps={{ htmlInput: { spellCheck: false }, inputLabel: { shrink: true } }}
      />

      {hasSetting(form.type) && (
        <TextField
          label={t('channel.form.setting')}
          value={form.setting}
          multiline
          minRows={3}
          placeholder='{}'
          onChange={(e) => { set('setting', e.target.value) }}
          error={errors.setting !== undefined}
          helperText={help('setting', t('channel.form.settingHelp'))}
          slotProps={{ htmlInput: { spellCheck: false }, inputLabel: { shrink: true } }}
        />
      )}
    </FormDrawer>
  )
}
