import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import FormHelperText from '@mui/material/FormHelperText'
import FormLabel from '@mui/material/FormLabel'
import IconButton from '@mui/material/IconButton'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import AddIcon from '@mui/icons-material/Add'
import DeleteIcon from '@mui/icons-material/DeleteOutlineOutlined'
import EastIcon from '@mui/icons-material/East'
import { type Dispatch, type SetStateAction, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { MultiSelect } from '../../components/MultiSelect'
import { useNotify } from '../../components/Notify'
import { useAction } from '../../lib/useAction'
import { fetchModels, fetchSavedModels, knownModels } from './api'
import { type ChannelFormState, type FormErrors, MAPPING_TEMPLATE, type MappingRow, relatedModels, splitNames } from './form'
import { UnpricedNote } from './UnpricedNote'

export interface ChannelModelsProps {
  state: ChannelFormState
  /** The saved channel (undefined when creating): its stored key lists its models. */
  channelId: number | undefined
  setErrors: Dispatch<SetStateAction<FormErrors>>
  /** The group names to choose from. */
  groups: string[]
  /** Channel type (as text) -> its default models. */
  defaults: Record<string, string[]>
  /** Every model the console knows, grown by the lists fetched from upstream. */
  allModels: string[]
  setAllModels: Dispatch<SetStateAction<string[]>>
  /** The models that have a price (undefined until known). */
  priced: ReadonlySet<string> | undefined
}

/** The drawer's groups, models (fill, fetch from upstream, add by name) and model mapping. */
export function ChannelModels ({ state: { form, set, errors, help, creating }, channelId, setErrors, groups, defaults, allModels, setAllModels, priced }: ChannelModelsProps) {
  const { t } = useTranslation()
  const notify = useNotify()
  const { act } = useAction()
  const { act: fetchAct, busy: fetching } = useAction()
  const [custom, setCustom] = useState('')
  const groupOptions = [...new Set([...groups, ...form.groups])]
  const modelOptions = [...new Set([...relatedModels(form.type, defaults), ...allModels, ...form.models])]

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
    await act(async () => {
      const names = await knownModels()
      setAllModels(names)
      addModels(names)
    })
  }

  const fetchList = async () => {
    // A saved channel with the key left blank lists with its stored key; otherwise the typed one is needed.
    const typedKey = form.key.trim()
    if (typedKey === '' && creating) {
      notify.error(t('channel.form.error.key'))
      setErrors((e) => ({ ...e, key: 'channel.form.error.key' }))
      return
    }
    await fetchAct(async () => {
      const names = typedKey === '' && channelId !== undefined
        ? await fetchSavedModels(channelId)
        : await fetchModels({ type: form.type, base_url: form.baseUrl.trim().replace(/\/+$/, ''), key: typedKey, proxy_url: form.proxyUrl.trim() })
      set('models', [...new Set(names)])
      setAllModels((all) => [...new Set([...all, ...names])].sort())
      return names
    }, {
      done: (names) => t('channel.form.modelsFetched', { count: names.length }),
      failed: (err) => {
        const reason = err instanceof Error ? err.message : ''
        return reason === '' ? t('channel.form.fetchFailed') : reason
      }
    })
  }

  const setRow = (i: number, row: MappingRow) => { set('mapping', form.mapping.map((r, j) => j === i ? row : r)) }
  const addTemplate = () => {
    if (form.mapping.some((r) => r.from.trim() === MAPPING_TEMPLATE.from)) return
    set('mapping', [...form.mapping.filter((r) => r.from.trim() !== '' || r.to.trim() !== ''), { ...MAPPING_TEMPLATE }])
  }

  return (
    <>
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
    </>
  )
}
