import Alert from '@mui/material/Alert'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import IconButton from '@mui/material/IconButton'
import InputAdornment from '@mui/material/InputAdornment'
import Stack from '@mui/material/Stack'
import Table from '@mui/material/Table'
import TableBody from '@mui/material/TableBody'
import TableCell from '@mui/material/TableCell'
import TableContainer from '@mui/material/TableContainer'
import TableHead from '@mui/material/TableHead'
import TablePagination from '@mui/material/TablePagination'
import TableRow from '@mui/material/TableRow'
import TextField from '@mui/material/TextField'
import Tooltip from '@mui/material/Tooltip'
import Typography from '@mui/material/Typography'
import useMediaQuery from '@mui/material/useMediaQuery'
import AddIcon from '@mui/icons-material/Add'
import DeleteIcon from '@mui/icons-material/DeleteOutlined'
import EditIcon from '@mui/icons-material/EditOutlined'
import SearchIcon from '@mui/icons-material/Search'
import { type FormEvent, useEffect, useMemo, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router-dom'
import { checkJson } from './json'
import { PRICE_PARAM } from './priceLink'
import { parseAmount, PRICING_KEYS, type PricingMaps, type PricingRow, putRow, removeRow, rowsOf } from './pricing-rows'
import type { OptionForm } from './useOptionForm'

/** The visual pricing table shows this many rows a page (docs/domain.md). */
const PAGE_SIZE = 10

const show = (n: number | undefined) => n === undefined ? '-' : String(n)

/**
 * Models as rows of name, fixed price, ratio and completion ratio, edited through a dialog. It
 * reads and writes the same ModelPrice, ModelRatio and CompletionRatio texts as the JSON editor,
 * so both views always agree. A confirmed row or a deleted one is saved at once, with the card's
 * other changes; if the save is refused the change stays in the editor, marked unsaved.
 */
export function VisualRatioEditor ({ form, labels, save }: {
  form: OptionForm
  labels: Record<typeof PRICING_KEYS[number], string>
  /** Saves the card with these values set. */
  save: (values: Partial<Record<typeof PRICING_KEYS[number], string>>) => Promise<boolean>
}) {
  const { t } = useTranslation()
  const [search, setSearch] = useState('')
  const [page, setPage] = useState(0)
  const [editing, setEditing] = useState<PricingRow | 'new'>()
  const [draftName, setDraftName] = useState('')
  // ?price=<model> (a link from the playground or the channel form) opens that model's row, or a
  // new row with its name filled in, once the maps are loaded.
  const [params, setParams] = useSearchParams()
  const asked = params.get(PRICE_PARAM) ?? ''

  const texts = PRICING_KEYS.map((key) => form.value(key))
  const broken = PRICING_KEYS.find((key, i) => checkJson(texts[i]!, { shape: 'object', values: 'ratio' }) !== undefined)
  const maps = useMemo<PricingMaps | undefined>(() => {
    if (broken !== undefined) return undefined
    const [price, ratio, completion] = texts.map((text) => JSON.parse(text) as Record<string, number>)
    return { ModelPrice: price!, ModelRatio: ratio!, CompletionRatio: completion! }
  }, [broken, texts[0], texts[1], texts[2]])
  const rows = useMemo(() => maps === undefined ? [] : rowsOf(maps), [maps])
  useEffect(() => {
    if (asked === '' || maps === undefined) return
    const row = rows.find((r) => r.name === asked)
    setSearch(asked)
    setPage(0)
    setDraftName(row === undefined ? asked : '')
    setEditing(row ?? 'new')
    setParams((p) => { p.delete(PRICE_PARAM); return p }, { replace: true })
  }, [asked, maps, rows, setParams])

  if (broken !== undefined || maps === undefined) {
    return <Alert severity='warning'>{t('settingsAdmin.ratio.brokenJson', { label: labels[broken ?? 'ModelRatio'] })}</Alert>
  }

  const needle = search.trim().toLowerCase()
  const shown = needle === '' ? rows : rows.filter((r) => r.name.toLowerCase().includes(needle))
  const lastPage = Math.max(0, Math.ceil(shown.length / PAGE_SIZE) - 1)
  const current = Math.min(page, lastPage)
  const write = (next: PricingMaps) => {
    const values = Object.fromEntries(PRICING_KEYS.map((key) => [key, JSON.stringify(next[key], null, 2)]))
    for (const key of PRICING_KEYS) form.set(key, values[key]!)
    void save(values)
  }
  const submit = (row: PricingRow, previous: string | undefined) => {
    const next = putRow(maps, row, previous)
    write(next)
    setEditing(undefined)
    // Show the stored row: the page of the filtered, sorted list that holds it.
    const list = rowsOf(next).filter((r) => needle === '' || r.name.toLowerCase().includes(needle))
    const at = list.findIndex((r) => r.name === row.name)
    if (at < 0) setSearch('')
    setPage(Math.floor(Math.max(0, at < 0 ? rowsOf(next).findIndex((r) => r.name === row.name) : at) / PAGE_SIZE))
  }

  return (
    <Stack sx={{ gap: 1.5 }} data-testid='ratio-visual'>
      <Stack direction={{ xs: 'column', sm: 'row' }} sx={{ gap: 1, alignItems: { sm: 'center' } }}>
        <TextField
          size='small'
          value={search}
          onChange={(e) => { setSearch(e.target.value); setPage(0) }}
          placeholder={t('settingsAdmin.ratio.search')}
          slotProps={{
            htmlInput: { 'aria-label': t('settingsAdmin.ratio.search') },
            input: { startAdornment: <InputAdornment position='start'><SearchIcon fontSize='small' /></InputAdornment> }
          }}
          sx={{ flex: 1 }}
        />
        <Button variant='outlined' startIcon={<AddIcon />} onClick={() => { setDraftName(''); setEditing('new') }} disabled={form.saving}>{t('settingsAdmin.ratio.add')}</Button>
      </Stack>
      <TableContainer sx={{ overflowX: 'auto' }}>
        <Table size='small' sx={{ minWidth: 520 }}>
          <TableHead>
            <TableRow>
              <TableCell>{t('settingsAdmin.ratio.name')}</TableCell>
              <TableCell align='right'>{t('settingsAdmin.ratio.price')}</TableCell>
              <TableCell align='right'>{t('settingsAdmin.ratio.ratio')}</TableCell>
              <TableCell align='right'>{t('settingsAdmin.ratio.completion')}</TableCell>
              <TableCell align='right'>{t('common.actions')}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {shown.slice(current * PAGE_SIZE, (current + 1) * PAGE_SIZE).map((row) => (
              <TableRow key={row.name} data-testid={`ratio-row-${row.name}`} hover>
                <TableCell sx={{ overflowWrap: 'anywhere' }}>{row.name}</TableCell>
                <TableCell align='right' data-testid='ratio-price'>{show(row.price)}</TableCell>
                <TableCell align='right' data-testid='ratio-ratio'>{row.price === undefined ? show(row.ratio) : '-'}</TableCell>
                <TableCell align='right' data-testid='ratio-completion'>{row.price === undefined ? show(row.completion) : '-'}</TableCell>
                <TableCell align='right' sx={{ whiteSpace: 'nowrap' }}>
                  <Tooltip title={t('common.edit')}>
                    <IconButton size='small' aria-label={t('settingsAdmin.ratio.editRow', { name: row.name })} onClick={() => { setEditing(row) }} disabled={form.saving}><EditIcon fontSize='small' /></IconButton>
                  </Tooltip>
                  <Tooltip title={t('common.delete')}>
                    <IconButton size='small' aria-label={t('settingsAdmin.ratio.deleteRow', { name: row.name })} onClick={() => { write(removeRow(maps, row.name)) }} disabled={form.saving}><DeleteIcon fontSize='small' /></IconButton>
                  </Tooltip>
                </TableCell>
              </TableRow>
            ))}
            {shown.length === 0 && (
              <TableRow><TableCell colSpan={5}><Typography color='text.secondary'>{t('settingsAdmin.ratio.noRows')}</Typography></TableCell></TableRow>
            )}
          </TableBody>
        </Table>
      </TableContainer>
      <TablePagination
        component='div'
        count={shown.length}
        page={current}
        onPageChange={(_e, p) => { setPage(p) }}
        rowsPerPage={PAGE_SIZE}
        rowsPerPageOptions={[PAGE_SIZE]}
        labelRowsPerPage={t('common.rowsPerPage')}
      />
      <Typography variant='body2' color='text.secondary'>{t('settingsAdmin.ratio.visualHelp')}</Typography>
      {editing !== undefined && (
        <RowDialog
          row={editing === 'new' ? undefined : editing}
          initialName={draftName}
          taken={(name) => rows.some((r) => r.name === name)}
          onClose={() => { setEditing(undefined) }}
          onSubmit={submit}
        />
      )}
    </Stack>
  )
}

type Errors = Partial<Record<'name' | 'price' | 'ratio' | 'completion', string>>

/** Adds a model or edits one; every value blank or a number >= 0, a price excludes the ratios. */
function RowDialog ({ row, initialName, taken, onClose, onSubmit }: { row: PricingRow | undefined, initialName: string, taken: (name: string) => boolean, onClose: () => void, onSubmit: (row: PricingRow, previous: string | undefined) => void }) {
  const { t } = useTranslation()
  const fullScreen = useMediaQuery('(max-width:600px)')
  const text = (n: number | undefined) => n === undefined ? '' : String(n)
  const [name, setName] = useState(row?.name ?? initialName)
  const [price, setPrice] = useState(text(row?.price))
  const [ratio, setRatio] = useState(text(row?.ratio))
  const [completion, setCompletion] = useState(text(row?.completion))
  const [errors, setErrors] = useState<Errors>({})
  const priced = price.trim() !== ''

  const submit = (e: FormEvent) => {
    e.preventDefault()
    const found: Errors = {}
    const trimmed = name.trim()
    if (trimmed === '') found.name = t('settingsAdmin.ratio.nameRequired')
    else if (trimmed !== row?.name && taken(trimmed)) found.name = t('settingsAdmin.ratio.duplicate', { name: trimmed })
    const p = parseAmount(price)
    const r = priced ? undefined : parseAmount(ratio)
    const c = priced ? undefined : parseAmount(completion)
    if (p === 'invalid') found.price = t('settingsAdmin.ratio.notNumeric')
    if (r === 'invalid') found.ratio = t('settingsAdmin.ratio.notNumeric')
    if (c === 'invalid') found.completion = t('settingsAdmin.ratio.notNumeric')
    if (p === undefined && r === undefined) found.ratio = t('settingsAdmin.ratio.needPriceOrRatio')
    if (p === undefined && r === undefined && c !== undefined && c !== 'invalid') found.ratio = t('settingsAdmin.ratio.needRatio')
    setErrors(found)
    if (Object.keys(found).length > 0 || p === 'invalid' || r === 'invalid' || c === 'invalid') return
    onSubmit(p !== undefined ? { name: trimmed, price: p } : { name: trimmed, ratio: r, completion: c }, row?.name)
  }

  const field = (key: keyof Errors, label: string, value: string, set: (v: string) => void, opts: { disabled?: boolean, help?: string } = {}) => (
    <TextField
      label={label}
      value={value}
      onChange={(e) => { set(e.target.value); setErrors((x) => ({ ...x, [key]: undefined })) }}
      error={errors[key] !== undefined}
      helperText={errors[key] ?? opts.help}
      disabled={opts.disabled}
      size='small'
      fullWidth
      slotProps={{ htmlInput: { inputMode: key === 'name' ? 'text' : 'decimal' } }}
    />
  )

  return (
    <Dialog open onClose={onClose} fullWidth maxWidth='xs' fullScreen={fullScreen} aria-labelledby='ratio-row-title'>
      <form onSubmit={submit} noValidate>
        <DialogTitle id='ratio-row-title'>{row === undefined ? t('settingsAdmin.ratio.addTitle') : t('settingsAdmin.ratio.editTitle', { name: row.name })}</DialogTitle>
        <DialogContent>
          <Stack sx={{ gap: 2, pt: 1 }}>
            {field('name', t('settingsAdmin.ratio.name'), name, setName)}
            {field('price', t('settingsAdmin.ratio.price'), price, setPrice, { help: t('settingsAdmin.ratio.priceHelp') })}
            {field('ratio', t('settingsAdmin.ratio.ratio'), ratio, setRatio, { disabled: priced, help: priced ? t('settingsAdmin.ratio.pricedHelp') : t('settingsAdmin.ratio.ratioHelp') })}
            {field('completion', t('settingsAdmin.ratio.completion'), completion, setCompletion, { disabled: priced, help: priced ? undefined : t('settingsAdmin.ratio.completionHelp') })}
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type='submit' variant='contained'>{t('common.confirm')}</Button>
        </DialogActions>
      </form>
    </Dialog>
  )
}
