import MenuItem from '@mui/material/MenuItem'
import TextField from '@mui/material/TextField'
import { useTranslation } from 'react-i18next'
import { baseUrlKind, type ChannelFormState, otherKind, OTHER_DEFAULTS } from './form'

export interface ChannelBasicsProps {
  state: ChannelFormState
  /** Channel type number (as text) -> name. */
  types: Record<string, string>
  onType: (type: number) => void
}

/** The drawer's first fields: type, base URL (and the type's extra field), name. */
export function ChannelBasics ({ state: { form, set, errors, errorText, help }, types, onType }: ChannelBasicsProps) {
  const { t } = useTranslation()
  const typeOptions = Object.entries(types).map(([id, name]) => ({ id: Number(id), name })).sort((a, b) => a.id - b.id)
  // A stored type the server no longer names stays selectable, so an edit does not change it silently.
  if (!typeOptions.some((o) => o.id === form.type)) typeOptions.push({ id: form.type, name: t('channel.unknownType', { type: form.type }) })
  const kind = baseUrlKind(form.type)
  const other = otherKind(form.type)

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

  return (
    <>
      <TextField
        select
        label={t('channel.form.type')}
        value={typeOptions.length === 0 ? '' : form.type}
        onChange={(e) => { onType(Number(e.target.value)) }}
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
        helperText={errorText('name')}
        slotProps={{ htmlInput: { maxLength: 200 } }}
      />
    </>
  )
}
