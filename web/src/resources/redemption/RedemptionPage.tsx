import type { RedemptionView } from '@modelgate/contracts'
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
import DownloadIcon from '@mui/icons-material/Download'
import SearchIcon from '@mui/icons-material/Search'
import { type FormEvent, useCallback, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'
import { PAGE_SIZES, usePageSize } from '../../lib/usePersistentState'
import { deleteRedemption, listRedemptions, setRedemptionStatus } from './api'
import { codesFileName, codesText, downloadText } from './download'
import { RedemptionDrawer } from './RedemptionDrawer'
import { RedemptionRow } from './RedemptionRow'

/** Codes shown in a read-only box (the view dialog and the after-create dialog). */
function CodesBox ({ text, label }: { text: string, label: string }) {
  return (
    <TextField
      value={text}
      fullWidth
      multiline
      maxRows={10}
      aria-label={label}
      slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'redemption-codes', style: { fontFamily: 'monospace', wordBreak: 'break-all' } } }}
      onFocus={(e) => { e.target.select() }}
    />
  )
}

/** Redemption codes (SPEC.md section 2, Redemption page), for admins. */
export default function RedemptionPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const [size, setSize] = usePageSize()
  const [page, setPage] = useState(1)
  const [keywordInput, setKeywordInput] = useState('')
  const [keyword, setKeyword] = useState({ text: '' })
  const [items, setItems] = useState<RedemptionView[]>([])
  const [total, setTotal] = useState(0)
  const [loading, setLoading] = useState(false)
  const [generation, setGeneration] = useState(0)
  const [selected, setSelected] = useState<Set<number>>(new Set())
  const [drawer, setDrawer] = useState<{ open: boolean, id: number | undefined }>({ open: false, id: undefined })
  const [created, setCreated] = useState<{ keys: string[], name: string } | undefined>()
  const [viewing, setViewing] = useState<RedemptionView | undefined>()
  const [deleting, setDeleting] = useState<RedemptionView | undefined>()
  const reload = useCallback(() => { setGeneration((g) => g + 1) }, [])

  useEffect(() => {
    let live = true
    setLoading(true)
    listRedemptions({ page, size, keyword: keyword.text }).then((p) => {
      if (!live) return
      if (p.items.length === 0 && page > 1) {
        setPage(page - 1)
        return
      }
      setItems(p.items)
      setTotal(p.total)
      setSelected(new Set())
    }, (err: unknown) => { if (live) notify.error(err) }).finally(() => { if (live) setLoading(false) })
    return () => { live = false }
  }, [page, size, keyword, generation, notify])

  const search = (e: FormEvent) => {
    e.preventDefault()
    setPage(1)
    setKeyword({ text: keywordInput })
  }

  const copySelected = async () => {
    const keys = items.filter((x) => selected.has(x.id)).map((x) => x.key)
    if (keys.length === 0) {
      notify.warning(t('common.noneSelected'))
      return
    }
    await notify.copy(keys.join('\n'), t('redemption.copiedSelected', { count: keys.length }))
  }

  const toggle = async (row: RedemptionView) => {
    const enabling = row.status === 2
    try {
      const after = await setRedemptionStatus(row.id, enabling ? 1 : 2)
      setItems((list) => list.map((x) => x.id === row.id ? after : x))
      notify.success(enabling ? t('redemption.enabled') : t('redemption.disabled'))
    } catch (err) {
      // Redeemed meanwhile: the server refuses and the list shows why after a reload.
      notify.error(err)
      reload()
    }
  }

  const confirmDelete = async () => {
    const row = deleting
    setDeleting(undefined)
    if (row === undefined) return
    try {
      await deleteRedemption(row.id)
      notify.success(t('redemption.deleted'))
      reload()
    } catch (err) {
      notify.error(err)
    }
  }

  const closeDrawer = useCallback(() => { setDrawer((d) => ({ ...d, open: false })) }, [])
  const afterCreate = useCallback((keys: string[], name: string) => {
    setDrawer((d) => ({ ...d, open: false }))
    notify.success(t('redemption.created.title', { count: keys.length }))
    setCreated({ keys, name })
    reload()
  }, [reload, notify, t])
  const afterSave = useCallback(() => {
    setDrawer((d) => ({ ...d, open: false }))
    reload()
  }, [reload])

  const allSelected = items.length > 0 && items.every((x) => selected.has(x.id))
  const toggleOne = (id: number) => {
    setSelected((s) => {
      const next = new Set(s)
      if (next.has(id)) next.delete(id)
      else next.add(id)
      return next
    })
  }
  const fileName = created === undefined ? '' : codesFileName(created.name)

  return (
    <Stack spacing={2}>
      <Box>
        <Typography variant='h5' component='h1'>{t('redemption.title')}</Typography>
        <Typography variant='body2' color='text.secondary'>{t('redemption.intro')}</Typography>
      </Box>
      <Stack component='form' onSubmit={search} direction={{ xs: 'column', sm: 'row' }} spacing={1} useFlexGap>
        <TextField size='small' label={t('redemption.search')} value={keywordInput} onChange={(e) => { setKeywordInput(e.target.value) }} sx={{ flex: 1, minWidth: 0 }} />
        <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
          <Button type='submit' variant='outlined' startIcon={<SearchIcon />}>{t('common.search')}</Button>
          <Button variant='contained' startIcon={<AddIcon />} onClick={() => { setDrawer({ open: true, id: undefined }) }}>{t('redemption.add')}</Button>
          <Button variant='outlined' startIcon={<ContentCopyIcon />} onClick={() => { void copySelected() }}>{t('redemption.copySelected')}</Button>
        </Stack>
      </Stack>
      <Paper sx={{ minWidth: 0 }}>
        {loading && <LinearProgress />}
        <TableContainer sx={{ overflowX: 'auto' }}>
          <Table size='small' aria-label={t('redemption.title')}>
            <TableHead>
              <TableRow>
                <TableCell padding='checkbox'>
                  <Checkbox
                    checked={allSelected}
                    indeterminate={selected.size > 0 && !allSelected}
                    onChange={() => { setSelected(allSelected ? new Set() : new Set(items.map((x) => x.id))) }}
                    slotProps={{ input: { 'aria-label': t('redemption.selectAll') } }}
                  />
                </TableCell>
                <TableCell>{t('redemption.col.id')}</TableCell>
                <TableCell>{t('redemption.col.name')}</TableCell>
                <TableCell>{t('redemption.col.status')}</TableCell>
                <TableCell>{t('redemption.col.quota')}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{t('redemption.col.created')}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{t('redemption.col.redeemer')}</TableCell>
                <TableCell>{t('redemption.col.actions')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {items.map((row) => (
                <RedemptionRow
                  key={row.id}
                  row={row}
                  selected={selected.has(row.id)}
                  onSelect={() => { toggleOne(row.id) }}
                  onView={() => { setViewing(row) }}
                  onCopy={() => { void notify.copy(row.key, t('redemption.codeCopied')) }}
                  onDelete={() => { setDeleting(row) }}
                  onToggle={() => { void toggle(row) }}
                  onEdit={() => { setDrawer({ open: true, id: row.id }) }}
                />
              ))}
              {items.length === 0 && !loading && (
                <TableRow>
                  <TableCell colSpan={8} align='center' sx={{ py: 4, color: 'text.secondary' }}>{t('redemption.empty')}</TableCell>
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
          labelDisplayedRows={({ from, to, count }) => t('redemption.displayedRows', { from, to, count })}
          sx={{ overflowX: 'auto' }}
        />
      </Paper>

      <RedemptionDrawer open={drawer.open} id={drawer.id} onClose={closeDrawer} onCreated={afterCreate} onSaved={afterSave} />

      <Dialog open={created !== undefined} onClose={() => { setCreated(undefined) }} fullWidth maxWidth='sm'>
        <DialogTitle>{t('redemption.created.title', { count: created?.keys.length ?? 0 })}</DialogTitle>
        <DialogContent>
          <DialogContentText sx={{ mb: 2 }}>{t('redemption.created.body', { file: fileName })}</DialogContentText>
          <CodesBox text={codesText(created?.keys ?? [])} label={t('redemption.created.title', { count: created?.keys.length ?? 0 })} />
        </DialogContent>
        <DialogActions sx={{ flexWrap: 'wrap', gap: 1 }}>
          <Button onClick={() => { setCreated(undefined) }}>{t('common.close')}</Button>
          <Button startIcon={<ContentCopyIcon />} onClick={() => { void notify.copy(codesText(created?.keys ?? []), t('redemption.created.copied')) }}>
            {t('redemption.created.copyAll')}
          </Button>
          <Button
            variant='contained' startIcon={<DownloadIcon />}
            onClick={() => {
              if (created !== undefined) downloadText(codesText(created.keys), fileName)
              setCreated(undefined)
            }}
          >
            {t('redemption.created.download')}
          </Button>
        </DialogActions>
      </Dialog>

      <Dialog open={viewing !== undefined} onClose={() => { setViewing(undefined) }} fullWidth maxWidth='sm'>
        <DialogTitle>{t('redemption.codeTitle', { name: viewing?.name ?? '' })}</DialogTitle>
        <DialogContent>
          <CodesBox text={viewing?.key ?? ''} label={t('redemption.codeTitle', { name: viewing?.name ?? '' })} />
        </DialogContent>
        <DialogActions>
          <Button startIcon={<ContentCopyIcon />} onClick={() => { void notify.copy(viewing?.key ?? '', t('redemption.codeCopied')) }}>{t('redemption.action.copy')}</Button>
          <Button onClick={() => { setViewing(undefined) }}>{t('common.close')}</Button>
        </DialogActions>
      </Dialog>

      <Dialog open={deleting !== undefined} onClose={() => { setDeleting(undefined) }}>
        <DialogTitle>{t('redemption.deleteTitle')}</DialogTitle>
        <DialogContent>
          <DialogContentText>{t('redemption.deleteBody', { name: deleting?.name ?? '', id: deleting?.id ?? 0 })}</DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => { setDeleting(undefined) }}>{t('common.cancel')}</Button>
          <Button color='error' variant='contained' onClick={() => { void confirmDelete() }}>{t('common.delete')}</Button>
        </DialogActions>
      </Dialog>
    </Stack>
  )
}
