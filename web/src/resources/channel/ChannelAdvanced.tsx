import Box from '@mui/material/Box'
import FormControlLabel from '@mui/material/FormControlLabel'
import FormHelperText from '@mui/material/FormHelperText'
import Switch from '@mui/material/Switch'
import TextField from '@mui/material/TextField'
import { CHANNEL_TYPE } from '@modelgate/contracts'
import { useTranslation } from 'react-i18next'
import { type ChannelFormState, hasSetting } from './form'
import { PriorityWeightFields } from './PriorityWeightFields'

/**
 * The drawer's remaining fields: organization, test model, input limit, auto-disable, status code
 * mapping, tag, priority and weight, proxy, parameter and header overrides, the type's setting.
 */
export function ChannelAdvanced ({ state: { form, set, errors, help } }: { state: ChannelFormState }) {
  const { t } = useTranslation()
  return (
    <>
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
    </>
  )
}
