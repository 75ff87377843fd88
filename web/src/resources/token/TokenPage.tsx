import type { CreatedTokenView, TokenView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Checkbox from '@mui/material/Checkbox'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogContentText from '@mui/material/DialogContentText'
import DialogTitle from '@mui/material/DialogTitle'
import LinearProgress from '@mui/material/LinearProgress'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Table from '@mui/material/Table'
import TableBody from '@mui/material/TableBody'
import TableCell from '@mui/material/TableCell'
import TableContainer from '@mui/material/TableContainer'
import TableHead from '@mui/material/TableHead'
import TablePagination from '@mui/material/TablePagination'
import TableRow from '@mui/material/TableRow'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import AddIcon from '@mui/icons-material/Add'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import SearchIcon from '@mui/icons-material/Search'
import { type FormEvent, useCallback, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'
import { PAGE_SIZES, usePageSize } from '../../lib/usePersistentState'
import { deleteToken, listTokens, revealKey, setTokenStatus } from './api'
import { KeyDialog } from './KeyDialog'
import { TokenDrawer } from './TokenDrawer'
import { TokenRow } from './TokenRow'

interface Filter { keyword: string, key: string }

/** The user's relay tokens (SPEC.md section 2, Token page). */
export default function TokenPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const [size, setSize] = usePageSize()
  const [page, setPage] = useState(1)
  const [keywordInput, setKeywordInput] = useState('')
  const [keyInput, setKeyInput] = useState('')
  const [filter, setFilter] = useState<Filter>({ keyword: '', key: '' })
  const [items, setItems] = useState<TokenView[]>([])
  const [total, setTotal] = useState(0)
  const [loading, setLoading] = useState(false)
  const [generation, setGeneration] = useState(0)
  const [selected, setSelected] = useState<Set<number>>(new Set())
  const [drawer, setDrawer] = useState<{ open: boolean, id: number | undefined }>({ open: false, id: undefined })
  const [created, setCreated] = useState<CreatedTokenView[] | undefined>()
  const [shownKey, setShownKey] = useState<{ name: string, key: string } | undefined>()
  const [deleting, setDeleting] = useState<TokenView | undefined>()
  const reload = useCallback(() => { setGeneration((g) => g + 1) }, [])

  useEffect(() => {
    let live = true
    setLoading(true)
    listTokens({ page, size, ...filter }).then((p) => {
      if (!live) return
      // The last row of the last page went away (deleted): show the page before it.
      if (p.items.length === 0 && page > 1) {
        setPage(page - 1)
        return
      }
      setItems(p.items)
      setTotal(p.total)
      setSelected(new Set())
    }, (err: unknown) => { if (live) notify.error(err) }).finally(() => { if (live) setLoading(false) })
    return () => { live = false }
  }, [page, size, filter, generation, notify])

  const search = (e: FormEvent) => {
    e.preventDefault()
    setPage(1)
    // A new object even when unchanged: searching again refreshes the list.
    setFilter({ keyword: keywordInput, key: keyInput })
  }

  const copySelected = async () => {
    const rows = items.filter((x) => selected.has(x.id))
    if (rows.length === 0) {
      notify.warning(t('common.noneSelected'))
      return
    }
    try {
      const lines = await Promise.all(rows.map(async (row) => `${row.name}    ${await revealKey(row.id)}`))
      await notify.copy(lines.join('\n'), t('token.copiedSelected', { count: rows.length }))
    } catch (err) {
      notify.error(err)
    }
  }

  const viewKey = async (row: TokenView) => {
    try {
      setShownKey({ name: row.name, key: await revealKey(row.id) })
    } catch (err) {
      notify.error(err)
    }
  }

  const copyKey = async (row: TokenView) => {
    try {
      await notify.copy(await revealKey(row.id), t('token.keyCopied'))
    } catch (err) {
      notify.error(err)
    }
  }

  const toggle = async (row: TokenView) => {
    const enabling = row.status !== 1
    try {
      await setTokenStatus(row.id, enabling ? 1 : 2)
      notify.success(enabling ? t('token.enabled') : t('token.disabled'))
      reload()
    } catch (err) {
      // An expired or exhausted token stays as it is: the server says why.
      notify.error(err)
    }
  }

  const confirmDelete = async () => {
    if (deleting === undefined) return
    try {
      await deleteToken(deleting.id)
      notify.success(t('token.deleted'))
      reload()
    } catch (err) {
      notify.error(err)
    } finally {
      setDeleting(undefined)
    }
  }

  const closeDrawer = useCallback(() => { setDrawer((d) => ({ ...d, open: false })) }, [])
  const saved = useCallback((made: CreatedTokenView[] | undefined) => {
    setDrawer((d) => ({ ...d, open: false }))
    if (made !== undefined) setCreated(made)
    reload()
  }, [reload])

  const allSelected = items.length > 0 && items.every((x) => selected.has(x.id))
  const toggleAll = () => { setSelected(allSelected ? new Set() : new Set(items.map((x) => x.id))) }
  const toggleOne = (id: number) => {
    setSelected((s) => {
      const next = new Set(s)
      if (next.has(id)) next.delete(id)
      else next.add(id)
      return next
    })
  }

  return (
    <Stack spacing={2}>
      <Box>
        <Typography variant='h5' component='h1'>{t('token.title')}</Typography>
        <Typography variant='body2' color='text.secondary'>{t('token.intro')}</Typography>
      </Box>
      <Stack component='form' onSubmit={search} direction={{ xs: 'column', md: 'row' }} spacing={1} useFlexGap>
        <TextField size='small' label={t('token.searchName')} value={keywordInput} onChange={(e) => { setKeywordInput(e.target.value) }} sx={{ flex: 1, minWidth: 0 }} />
        <TextField size='small' label={t('token.searchKey')} value={keyInput} onChange={(e) => { setKeyInput(e.target.value) }} sx={{ flex: 1, minWidth: 0 }} />
        <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
          <Button type='submit' variant='outlined' startIcon={<SearchIcon />}>{t('common.search')}</Button>
          <Button variant='contained' startIcon={<AddIcon />} onClick={() => { setDrawer({ open: true, id: undefined }) }}>{t('token.add')}</Button>
          <Button variant='outlined' startIcon={<ContentCopyIcon />} onClick={() => { void copySelected() }}>{t('token.copySelected')}</Button>
        </Stack>
      </Stack>
      <Paper sx={{ minWidth: 0 }}>
        {loading && <LinearProgress />}
        <TableContainer sx={{ overflowX: 'auto' }}>
          <Table size='small' aria-label={t('token.title')}>
            <TableHead>
              <TableRow>
                <TableCell padding='checkbox'>
                  <Checkbox
                    checked={allSelected}
                    indeterminate={selected.size > 0 && !allSelected}
                    onChange={toggleAll}
                    slotProps={{ input: { 'aria-label': t('token.selectAll') } }}
                  />
                </TableCell>
                <TableCell>{t('token.col.name')}</TableCell>
                <TableCell>{t('token.col.status')}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{t('token.col.quota')}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{t('token.col.created')}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{t('token.col.expiry')}</TableCell>
                <TableCell>{t('token.col.actions')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {items.map((row) => (
                <TokenRow
                  key={row.id}
                  row={row}
                  selected={selected.has(row.id)}
                  onSelect={() => { toggleOne(row.id) }}
                  onViewKey={() => { void viewKey(row) }}
                  onCopyKey={() => { void copyKey(row) }}
                  onToggle={() => { void toggle(row) }}
                  onEdit={() => { setDrawer({ open: true, id: row.id }) }}
                  onDelete={() => { setDeleting(row) }}
                />
              ))}
              {items.length === 0 && !loading && (
                <TableRow>
                  <TableCell colSpan={7} align='center' sx={{ py: 4, color: 'text.secondary' }}>{t('token.empty')}</TableCell>
                </TableRow>
              )}
            </TableBody>
          </Table>
        </TableContainer>
        <TablePagination
          component='div'
          count={total}
          page={Math.max(0, page - 1)}
          rowsPerPage={size}
          rowsPerPageOptions={PAGE_SIZES}
          onPageChange={(_e, p) => { setPage(p + 1) }}
          onRowsPerPageChange={(e) => { setSize(Number(e.target.value)); setPage(1) }}
          labelRowsPerPage={t('common.rowsPerPage')}
          labelDisplayedRows={({ from, to, count }) => t('token.displayedRows', { from, to, count })}
          sx={{ overflowX: 'auto' }}
        />
      </Paper>

      <TokenDrawer open={drawer.open} tokenId={drawer.id} onClose={closeDrawer} onSaved={saved} />

      <KeyDialog
        keys={created?.map((c) => c.full_key)}
        title={created !== undefined && created.length > 1 ? t('token.created.titleMany', { count: created.length }) : t('token.created.title')}
        hint={t('token.created.hint')}
        copyLabel={created !== undefined && created.length > 1 ? t('token.created.copyAll') : t('token.created.copy')}
        onClose={() => { setCreated(undefined) }}
      />
      <KeyDialog
        keys={shownKey === undefined ? undefined : [shownKey.key]}
        title={t('token.keyTitle', { name: shownKey?.name ?? '' })}
        hint={t('token.keyHint')}
        copyLabel={t('token.action.copyKey')}
        onClose={() => { setShownKey(undefined) }}
      />

      <Dialog open={deleting !== undefined} onClose={() => { setDeleting(undefined) }}>
        <DialogTitle>{t('token.deleteTitle')}</DialogTitle>
        <DialogContent>
          <DialogContentText>{t('token.deleteBody', { name: deleting?.name ?? '' })}</DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => { setDeleting(undefined) }}>{t('common.cancel')}</Button>
          <Button color='error' variant='contained' onClick={() => { void confirmDelete() }}>{t('common.delete')}</Button>
        </DialogActions>
      </Dialog>
    </Stack>
  )
}
