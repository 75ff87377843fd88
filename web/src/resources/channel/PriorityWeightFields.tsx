import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import { useTranslation } from 'react-i18next'

type Field = 'priority' | 'weight'

export interface PriorityWeightFieldsProps {
  values: Record<Field, string>
  onChange: (field: Field, text: string) => void
  /** Which fields are in error. */
  errors: Partial<Record<Field, string>>
  /** Under each field: its error, or what it means. */
  help: Record<Field, string>
}

/** A channel's priority and weight side by side (stacked on small screens). */
export function PriorityWeightFields ({ values, onChange, errors, help }: PriorityWeightFieldsProps) {
  const { t } = useTranslation()
  return (
    <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2}>
      <TextField
        label={t('channel.form.priority')}
        value={values.priority}
        type='number'
        onChange={(e) => { onChange('priority', e.target.value) }}
        error={errors.priority !== undefined}
        helperText={help.priority}
        sx={{ flex: 1 }}
        slotProps={{ htmlInput: { min: -999, step: 1 } }}
      />
      <TextField
        label={t('channel.form.weight')}
        value={values.weight}
        type='number'
        onChange={(e) => { onChange('weight', e.target.value) }}
        error={errors.weight !== undefined}
        helperText={help.weight}
        sx={{ flex: 1 }}
        slotProps={{ htmlInput: { min: 0, step: 1 } }}
      />
    </Stack>
  )
}
