import FormControl from '@mui/material/FormControl'
import InputLabel from '@mui/material/InputLabel'
import MenuItem from '@mui/material/MenuItem'
import Select from '@mui/material/Select'
import Slider from '@mui/material/Slider'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import { useTranslation } from 'react-i18next'
import type { PlaygroundOptions, PlaygroundSettings } from './usePlayground'

const TEMPERATURE = { min: 0.1, max: 1, step: 0.1 }

/** Group, model, temperature, max tokens and system prompt. */
export function PlaygroundPanel ({ options, settings, onChange }: { options: PlaygroundOptions, settings: PlaygroundSettings, onChange: (s: PlaygroundSettings) => void }) {
  const { t } = useTranslation()
  const groups = Object.entries({ ...options.groups, ...(options.groups?.[settings.group] === undefined ? { [settings.group]: { desc: settings.group, ratio: 1 } } : {}) })
  const models = options.models ?? []
  const set = (patch: Partial<PlaygroundSettings>) => { onChange({ ...settings, ...patch }) }
  return (
    <Stack sx={{ gap: 2.5, minWidth: 0 }}>
      <FormControl size='small' fullWidth>
        <InputLabel id='pg-group'>{t('playground.group')}</InputLabel>
        <Select labelId='pg-group' label={t('playground.group')} value={settings.group} onChange={(e) => { set({ group: e.target.value }) }}>
          {groups.map(([name, info]) => (
            <MenuItem key={name} value={name}>{t('playground.groupRatio', { group: info.desc !== '' ? info.desc : name, ratio: info.ratio })}</MenuItem>
          ))}
        </Select>
      </FormControl>
      <FormControl size='small' fullWidth disabled={models.length === 0}>
        <InputLabel id='pg-model'>{t('playground.model')}</InputLabel>
        <Select
          labelId='pg-model'
          label={t('playground.model')}
          value={models.includes(settings.model) ? settings.model : ''}
          onChange={(e) => { set({ model: e.target.value }) }}
          data-testid='pg-model'
          MenuProps={{ slotProps: { paper: { sx: { maxHeight: 360 } } } }}
        >
          {models.map((m) => <MenuItem key={m} value={m}>{m}</MenuItem>)}
        </Select>
      </FormControl>
      <Stack>
        <Typography id='pg-temperature' variant='body2' color='text.secondary'>{t('playground.temperature', { value: settings.temperature })}</Typography>
        <Slider
          aria-labelledby='pg-temperature'
          value={Math.max(TEMPERATURE.min, settings.temperature)}
          min={TEMPERATURE.min}
          max={TEMPERATURE.max}
          step={TEMPERATURE.step}
          marks
          valueLabelDisplay='auto'
          onChange={(_e, v) => { set({ temperature: Math.round((Array.isArray(v) ? v[0] ?? TEMPERATURE.min : v) * 10) / 10 }) }}
          sx={{ mx: 1, width: 'calc(100% - 16px)' }}
        />
      </Stack>
      <TextField
        label={t('playground.maxTokens')}
        type='number'
        size='small'
        value={settings.maxTokens}
        helperText={t('playground.maxTokensHelp')}
        onChange={(e) => { const n = Math.trunc(Number(e.target.value)); set({ maxTokens: Number.isFinite(n) && n > 0 ? n : 0 }) }}
        slotProps={{ htmlInput: { min: 0, step: 1 } }}
      />
      <TextField
        label={t('playground.systemPrompt')}
        placeholder={t('playground.systemPromptPlaceholder')}
        value={settings.systemPrompt}
        onChange={(e) => { set({ systemPrompt: e.target.value }) }}
        multiline
        minRows={3}
        maxRows={10}
        size='small'
      />
    </Stack>
  )
}
