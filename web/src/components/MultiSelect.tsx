import Autocomplete from '@mui/material/Autocomplete'
import TextField from '@mui/material/TextField'

export interface MultiSelectProps {
  label: string
  options: string[]
  value: string[]
  onChange: (value: string[]) => void
  helperText?: string
  required?: boolean
  error?: boolean
  disabled?: boolean
}

/** Several of `options`, shown as chips; the list stays open between choices. */
export function MultiSelect ({ label, options, value, onChange, helperText, required, error, disabled }: MultiSelectProps) {
  return (
    <Autocomplete
      multiple
      disableCloseOnSelect
      disabled={disabled}
      options={options}
      value={value}
      onChange={(_e, next) => { onChange(next) }}
      renderInput={(params) => <TextField {...params} label={label} required={required} error={error} helperText={helperText} />}
    />
  )
}
