import type { OptionKey } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import FormControlLabel from '@mui/material/FormControlLabel'
import FormHelperText from '@mui/material/FormHelperText'
import InputAdornment from '@mui/material/InputAdornment'
import MenuItem from '@mui/material/MenuItem'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import type { TFunction } from 'i18next'
import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { type ConfirmRequest, useConfirm } from '../../components/Confirm'
import { checkJson, type JsonRule } from './json'
import { type Change, type OptionForm, type SaveRules, useOptionForm } from './useOptionForm'

interface Common {
  key: OptionKey
  label: string
  /** A hint under the field; a function receives the value shown. */
  help?: string | ((value: string) => string)
  /** Spans the whole card width. */
  wide?: boolean
}

/** One option input of a card. */
export type Field = Common & (
  | { kind: 'text', placeholder?: string, rows?: number, url?: boolean }
  | { kind: 'secret' }
  | { kind: 'number', min: number, max?: number, integer?: boolean, step?: number }
  | { kind: 'switch', confirmOff?: ConfirmRequest, forced?: (form: OptionForm) => boolean | undefined }
  | { kind: 'select', choices: ReadonlyArray<{ value: string, label: string }> }
  | { kind: 'json', rule: JsonRule, rows?: number, placeholder?: string }
)

/** Addresses are stored without trailing slashes (docs/domain.md). */
export const stripSlashes = (value: string): string => value.trim().replace(/\/+$/, '')

function numberProblem (t: TFunction, field: Extract<Field, { kind: 'number' }>, value: string): string | undefined {
  const n = Number(value)
  const ok = value !== '' && Number.isFinite(n) && n >= field.min && (field.max === undefined || n <= field.max) && (field.integer !== true || Number.isInteger(n))
  if (ok) return undefined
  if (field.integer === true && field.max !== undefined) return t('settingsAdmin.invalid.integerRange', { label: field.label, min: field.min, max: field.max })
  if (field.integer === true) return t('settingsAdmin.invalid.integer', { label: field.label, min: field.min })
  return t('settingsAdmin.invalid.number', { label: field.label, min: field.min })
}

/** The message for JSON option text that breaks its rule, in the admin's language. */
export function jsonProblem (t: TFunction, label: string, value: string, rule: JsonRule): string | undefined {
  const p = checkJson(value, rule)
  if (p === undefined) return undefined
  switch (p.kind) {
    case 'syntax': return t('settingsAdmin.invalid.json', { label, detail: p.detail })
    case 'shape': return p.expected === 'array' ? t('settingsAdmin.invalid.jsonArray', { label }) : t('settingsAdmin.invalid.jsonObject', { label })
    case 'duplicate': return t('settingsAdmin.invalid.duplicate', { label, name: p.name })
    case 'emptyName': return t('settingsAdmin.invalid.emptyName', { label })
    case 'value': return p.expected === 'ratio' ? t('settingsAdmin.invalid.ratio', { label, name: p.name }) : t('settingsAdmin.invalid.text', { label, name: p.name })
  }
}

/** Normalisers and checks of `fields`, plus a card-wide check. */
export function rulesOf (t: TFunction, fields: readonly Field[], check?: (changes: readonly Change[]) => string | undefined): SaveRules {
  const normalise: NonNullable<SaveRules['normalise']> = {}
  const validate: NonNullable<SaveRules['validate']> = {}
  for (const field of fields) {
    if (field.kind === 'number') {
      normalise[field.key] = (v) => v.trim()
      validate[field.key] = (v) => numberProblem(t, field, v)
    } else if (field.kind === 'text' && field.url === true) {
      normalise[field.key] = stripSlashes
    } else if (field.kind === 'json') {
      validate[field.key] = (v) => jsonProblem(t, field.label, v, field.rule)
    }
  }
  return { normalise, validate, check }
}

const mono = { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: 13 }

/** The input of one option, bound to the card's form. */
export function OptionField ({ field, form, confirm }: { field: Field, form: OptionForm, confirm: (r: ConfirmRequest) => Promise<boolean> }) {
  const { t } = useTranslation()
  const value = form.value(field.key)
  const error = form.error(field.key)
  const help = error ?? (typeof field.help === 'function' ? field.help(value) : field.help)
  const span = field.wide === true || field.kind === 'json' || (field.kind === 'text' && field.rows !== undefined) ? { gridColumn: '1 / -1' } : undefined
  const common = {
    label: field.label,
    value,
    fullWidth: true,
    size: 'small' as const,
    error: error !== undefined,
    helperText: help,
    disabled: form.saving,
    onChange: (e: { target: { value: string } }) => { form.set(field.key, e.target.value) },
    sx: span
  }
  switch (field.kind) {
    case 'switch': {
      const forced = field.forced?.(form)
      const checked = forced ?? value === 'true'
      const toggle = async (on: boolean) => {
        if (!on && field.confirmOff !== undefined && !await confirm(field.confirmOff)) return
        form.set(field.key, on ? 'true' : 'false')
      }
      return (
        <Box sx={span}>
          <FormControlLabel
            control={<Switch checked={checked} disabled={form.saving || forced !== undefined} onChange={(_e, on) => { void toggle(on) }} />}
            label={field.label}
          />
          {help !== undefined && help !== '' && <FormHelperText error={error !== undefined} sx={{ mt: -0.5 }}>{help}</FormHelperText>}
        </Box>
      )
    }
    case 'secret': {
      const set = form.item(field.key)?.is_set === true
      const clear = async () => {
        const ok = await confirm({ title: t('settingsAdmin.secretClearTitle', { label: field.label }), body: t('settingsAdmin.secretClearBody'), action: t('settingsAdmin.secretClear'), danger: true })
        if (ok) await form.clear(field.key, field.label)
      }
      return (
        <TextField
          {...common}
          type='password'
          autoComplete='new-password'
          placeholder={set ? t('settingsAdmin.secretSet') : t('settingsAdmin.secretUnset')}
          helperText={help ?? (set ? t('settingsAdmin.secretKeep') : undefined)}
          slotProps={{
            inputLabel: { shrink: true },
            input: set
              ? { endAdornment: <InputAdornment position='end'><Button size='small' color='error' disabled={form.saving} onClick={() => { void clear() }}>{t('settingsAdmin.secretClear')}</Button></InputAdornment> }
              : undefined
          }}
        />
      )
    }
    case 'number':
      return <TextField {...common} type='number' slotProps={{ htmlInput: { min: field.min, max: field.max, step: field.step ?? (field.integer === true ? 1 : 'any') } }} />
    case 'select':
      return (
        <TextField {...common} select>
          {field.choices.map((c) => <MenuItem key={c.value} value={c.value}>{c.label}</MenuItem>)}
        </TextField>
      )
    case 'json':
      return (
        <TextField
          {...common}
          multiline
          minRows={3}
          maxRows={field.rows ?? 12}
          placeholder={field.placeholder}
          slotProps={{ htmlInput: { spellCheck: false, style: mono } }}
        />
      )
    case 'text':
      return (
        <TextField
          {...common}
          multiline={field.rows !== undefined}
          minRows={field.rows}
          maxRows={field.rows === undefined ? undefined : Math.max(field.rows, 16)}
          placeholder={field.placeholder}
          type={field.url === true ? 'url' : 'text'}
        />
      )
  }
}

/** A grid of option inputs: one column on small screens, two from md up. */
export function FieldGrid ({ fields, form, confirm }: { fields: readonly Field[], form: OptionForm, confirm: (r: ConfirmRequest) => Promise<boolean> }) {
  return (
    <Box sx={{ display: 'grid', gridTemplateColumns: { xs: 'minmax(0, 1fr)', md: 'repeat(2, minmax(0, 1fr))' }, gap: 2, alignItems: 'start' }}>
      {fields.map((field) => <OptionField key={field.key} field={field} form={form} confirm={confirm} />)}
    </Box>
  )
}

export interface OptionCardProps {
  /** Names the card for tests (`option-card-<id>`). */
  id: string
  title: string
  description?: string
  /** Next to the title (reset buttons and the like). */
  action?: ReactNode
  children: ReactNode
  /** The save button's handler; no button without one. */
  onSave?: () => void
  saving?: boolean
}

/** A titled settings card with a save button for the options it holds. */
export function OptionCard ({ id, title, description, action, children, onSave, saving = false }: OptionCardProps) {
  const { t } = useTranslation()
  return (
    <Paper component='section' aria-label={title} data-testid={`option-card-${id}`} sx={{ p: { xs: 2, sm: 3 }, minWidth: 0 }}>
      <Stack direction='row' sx={{ alignItems: 'center', justifyContent: 'space-between', gap: 1, mb: description === undefined ? 2 : 0.5, flexWrap: 'wrap' }}>
        <Typography variant='h6' component='h2'>{title}</Typography>
        {action}
      </Stack>
      {description !== undefined && <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>{description}</Typography>}
      {children}
      {onSave !== undefined && (
        <Stack direction='row' sx={{ justifyContent: 'flex-end', mt: 2 }}>
          <Button variant='contained' onClick={onSave} disabled={saving}>{t('common.save')}</Button>
        </Stack>
      )}
    </Paper>
  )
}

export interface FieldsCardProps extends Omit<OptionCardProps, 'children' | 'onSave' | 'saving'> {
  fields: readonly Field[]
  /** A message when the changes as a whole may not be saved. */
  check?: (changes: readonly Change[]) => string | undefined
  /** More content under the fields, bound to the same form. */
  extra?: (form: OptionForm) => ReactNode
}

/** A card of plain option fields saved together. */
export function FieldsCard ({ fields, check, extra, ...card }: FieldsCardProps) {
  const { t } = useTranslation()
  const form = useOptionForm()
  const [confirm, dialog] = useConfirm()
  return (
    <OptionCard {...card} saving={form.saving} onSave={() => { void form.save(rulesOf(t, fields, check)) }}>
      <FieldGrid fields={fields} form={form} confirm={confirm} />
      {extra?.(form)}
      {dialog}
    </OptionCard>
  )
}
