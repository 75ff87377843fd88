import { REDEMPTION_STATUS, type RedemptionView } from '@modelgate/contracts'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogContentText from '@mui/material/DialogContentText'
import DialogTitle from '@mui/material/DialogTitle'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import AddIcon from '@mui/icons-material/Add'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import DownloadIcon from '@mui/icons-material/Download'
import SearchIcon from '@mui/icons-material/Search'
import { type FormEvent, useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useConfirm } from '../../components/Confirm'
import { useNotify } from '../../components/Notify'
import { PageTitle } from '../../components/PageTitle'
import { PagedTable, SelectAllCell } from '../../components/PagedTable'
import { useAction } from '../../lib/useAction'
import { useDrawer } from '../../lib/useDrawer'
import { usePagedList } from '../../lib/usePagedList'
import { useSelection } from '../../lib/useSelection'
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

/** Redemption codes, for admins. */
export default function RedemptionPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const [keywordInput, setKeywordInput] = useState('')
  const [keyword, setKeyword] = useState({ text: '' })
  const [created, setCreated] = useState<{ keys: string[], name: string } | undefined>()
  const [viewing, setViewing] = useState<RedemptionView | undefined>()
  const [confirm, confirmDialog] = useConfirm()
  const load = useCallback(async (page: number, size: number) => await listRedemptions({ page, size, keyword: keyword.text }), [keyword])
  const selection = useSelection<number>()
  // Each page arrives with nothing selected.
  const { items, setItems, loading, setPage, reload, paging } = usePagedList(load, { onLoad: selection.clear })
  const { act } = useAction(reload)
  const drawer = useDrawer(reload)

  const search = (e: FormEvent) => {
    e.preventDefault()
    setPage(1)
    setKeyword({ text: keywordInput })
  }

  const copySelected = async () => {
    const keys = items.filter((x) => selection.selected.has(x.id)).map((x) => x.key)
    if (keys.length === 0) {
      notify.warning(t('common.noneSelected'))
      return
    }
    await notify.copy(keys.join('\n'), t('redemption.copiedSelected', { count: keys.length }))
  }

  const toggle = async (row: RedemptionView) => {
    const enabling = row.status === REDEMPTION_STATUS.disabled
    // Redeemed meanwhile: the server refuses and the list shows why after a reload.
    await act(async () => {
      const after = await setRedemptionStatus(row.id, enabling ? REDEMPTION_STATUS.unused : REDEMPTION_STATUS.disabled)
      setItems((list) => list.map((x) => x.id === row.id ? after : x))
    }, { done: enabling ? t('redemption.enabled') : t('redemption.disabled'), reload: 'failed' })
  }

  const remove = async (row: RedemptionView) => {
    const ok = await confirm({ title: t('redemption.deleteTitle'), body: t('redemption.deleteBody', { name: row.name, id: row.id }), action: t('common.delete'), danger: true })
    if (ok) await act(async () => { await deleteRedemption(row.id) }, { done: t('redemption.deleted') })
  }

  const { saved: afterSave } = drawer
  const afterCreate = useCallback((keys: string[], name: string) => {
    afterSave()
    notify.success(t('redemption.created.title', { count: keys.length }))
    setCreated({ keys, name })
  }, [afterSave, notify, t])

  const fileName = created === undefined ? '' : codesFileName(created.name)

  return (
    <Stack spacing={2}>
      <PageTitle title={t('redemption.title')} intro={t('redemption.intro')} />
      <Stack component='form' onSubmit={search} direction={{ xs: 'column', sm: 'row' }} spacing={1} useFlexGap>
        <TextField size='small' label={t('redemption.search')} value={keywordInput} onChange={(e) => { setKeywordInput(e.target.value) }} sx={{ flex: 1, minWidth: 0 }} />
        <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
          <Button type='submit' variant='outlined' startIcon={<SearchIcon />}>{t('common.search')}</Button>
          <Button variant='contained' startIcon={<AddIcon />} onClick={drawer.openNew}>{t('redemption.add')}</Button>
          <Button variant='outlined' startIcon={<ContentCopyIcon />} onClick={() => { void copySelected() }}>{t('redemption.copySelected')}</Button>
        </Stack>
      </Stack>
      <PagedTable
        ariaLabel={t('redemption.title')}
        loading={loading}
        columns={[
          { cell: <SelectAllCell selection={selection} shown={items.map((x) => x.id)} label={t('redemption.selectAll')} /> },
          { label: 'redemption.col.id' },
          { label: 'redemption.col.name' },
          { label: 'redemption.col.status' },
          { label: 'redemption.col.quota' },
          { label: 'redemption.col.created', nowrap: true },
          { label: 'redemption.col.redeemer', nowrap: true },
          { label: 'redemption.col.actions' }
        ]}
        empty={items.length === 0 && !loading}
        emptyText={t('redemption.empty')}
        paging={paging}
      >
        {items.map((row) => (
          <RedemptionRow
            key={row.id}
            row={row}
            selected={selection.selected.has(row.id)}
            onSelect={() => { selection.toggle(row.id) }}
            onView={() => { setViewing(row) }}
            onCopy={() => { void notify.copy(row.key, t('redemption.codeCopied')) }}
            onDelete={() => { void remove(row) }}
            onToggle={() => { void toggle(row) }}
            onEdit={() => { drawer.openFor(row.id) }}
          />
        ))}
      </PagedTable>

      <RedemptionDrawer open={drawer.open} id={drawer.id} onClose={drawer.close} onCreated={afterCreate} onSaved={afterSave} />

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

      {confirmDialog}
    </Stack>
  )
}
