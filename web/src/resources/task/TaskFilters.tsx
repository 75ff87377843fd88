import Button from '@mui/material/Button'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import RestartAltIcon from '@mui/icons-material/RestartAlt'
import SearchIcon from '@mui/icons-material/Search'
import type { ChangeEvent, FormEvent } from 'react'
import { useTranslation } from 'react-i18next'

export interface TaskFilterForm { start: string, end: string, id: string, channel: string }

export interface TaskFiltersProps {
  form: TaskFilterForm
  onChange: (form: TaskFilterForm) => void
  onSubmit: () => void
  onReset: () => void
  /** Label of the task id field (drawing: mj_id, music: task_id). */
  idLabel: string
  /** Admins filter by channel too. */
  admin: boolean
}

/** Time range, task id and (admins) channel id, shared by the drawing and music task screens. */
export function TaskFilters ({ form, onChange, onSubmit, onReset, idLabel, admin }: TaskFiltersProps) {
  const { t } = useTranslation()
  const set = (key: keyof TaskFilterForm) => (e: ChangeEvent<HTMLInputElement>) => { onChange({ ...form, [key]: e.target.value }) }
  const submit = (e: FormEvent) => {
    e.preventDefault()
    onSubmit()
  }
  const field = { flex: '1 1 180px', minWidth: 0 }
  return (
    <Stack component='form' onSubmit={submit} direction={{ xs: 'column', sm: 'row' }} spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }} aria-label={t('task.filter.title')}>
      <TextField size='small' type='datetime-local' label={t('task.filter.start')} value={form.start} onChange={set('start')} slotProps={{ inputLabel: { shrink: true } }} sx={field} />
      <TextField size='small' type='datetime-local' label={t('task.filter.end')} value={form.end} onChange={set('end')} slotProps={{ inputLabel: { shrink: true } }} sx={field} />
      <TextField size='small' label={idLabel} value={form.id} onChange={set('id')} sx={field} />
      {admin && (
        <TextField size='small' label={t('task.filter.channel')} value={form.channel} onChange={set('channel')} slotProps={{ htmlInput: { inputMode: 'numeric' } }} sx={field} />
      )}
      <Stack direction='row' spacing={1}>
        <Button type='submit' variant='contained' startIcon={<SearchIcon />}>{t('common.search')}</Button>
        <Button variant='outlined' startIcon={<RestartAltIcon />} onClick={onReset}>{t('common.reset')}</Button>
      </Stack>
    </Stack>
  )
}

/** The query of a filter form; an unreadable channel id is sent as none. */
export function channelOf (text: string): number | undefined {
  const s = text.trim()
  return /^\d{1,9}$/.test(s) && Number(s) > 0 ? Number(s) : undefined
}
