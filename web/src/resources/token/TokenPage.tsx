import { type CreatedTokenView, TOKEN_STATUS, type TokenView } from '@modelgate/contracts'
import Button from '@mui/material/Button'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import AddIcon from '@mui/icons-material/Add'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
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
import { deleteToken, listTokens, revealKey, setTokenStatus } from './api'
import { KeyDialog } from './KeyDialog'
import { TokenDrawer } from './TokenDrawer'
import { TokenRow } from './TokenRow'

interface Filter { keyword: string, key: string }

/** The user's relay tokens. */
export default function TokenPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const [keywordInput, setKeywordInput] = useState('')
  const [keyInput, setKeyInput] = useState('')
  const [filter, setFilter] = useState<Filter>({ keyword: '', key: '' })
  const [created, setCreated] = useState<CreatedTokenView[] | undefined>()
  const [shownKey, setShownKey] = useState<{ name: string, key: string } | undefined>()
  const [confirm, confirmDialog] = useConfirm()
  const load = useCallback(async (page: number, size: number) => await listTokens({ page, size, ...filter }), [filter])
  const selection = useSelection<number>()
  // Each page arrives with nothing selected.
  const { items, loading, setPage, reload, paging } = usePagedList(load, { onLoad: selection.clear })
  const { act } = useAction(reload)
  const drawer = useDrawer(reload)

  const search = (e: FormEvent) => {
    e.preventDefault()
    setPage(1)
    // A new object even when unchanged: searching again refreshes the list.
    setFilter({ keyword: keywordInput, key: keyInput })
  }

  const copySelected = async () => {
    const rows = items.filter((x) => selection.selected.has(x.id))
    if (rows.length === 0) {
      notify.warning(t('common.noneSelected'))
      return
    }
    await act(async () => {
      const lines = await Promise.all(rows.map(async (row) => `${row.name}    ${await revealKey(row.id)}`))
      await notify.copy(lines.join('\n'), t('token.copiedSelected', { count: rows.length }))
    }, { reload: 'never' })
  }

  const viewKey = async (row: TokenView) => {
    await act(async () => { setShownKey({ name: row.name, key: await revealKey(row.id) }) }, { reload: 'never' })
  }

  const copyKey = async (row: TokenView) => {
    await act(async () => { await notify.copy(await revealKey(row.id), t('token.keyCopied')) }, { reload: 'never' })
  }

  const toggle = async (row: TokenView) => {
    const enabling = row.status !== TOKEN_STATUS.enabled
    // An expired or exhausted token stays as it is: the server says why.
    await act(async () => await setTokenStatus(row.id, enabling ? TOKEN_STATUS.enabled : TOKEN_STATUS.disabled), { done: enabling ? t('token.enabled') : t('token.disabled') })
  }

  const remove = async (row: TokenView) => {
    const ok = await confirm({ title: t('token.deleteTitle'), body: t('token.deleteBody', { name: row.name }), action: t('common.delete'), danger: true })
    if (ok) await act(async () => { await deleteToken(row.id) }, { done: t('token.deleted') })
  }

  const { saved: closeAndReload } = drawer
  const saved = useCallback((made: CreatedTokenView[] | undefined) => {
    closeAndReload()
    if (made !== undefined) setCreated(made)
  }, [closeAndReload])

  return (
    <Stack spacing={2}>
      <PageTitle title={t('token.title')} intro={t('token.intro')} />
      <Stack component='form' onSubmit={search} direction={{ xs: 'column', md: 'row' }} spacing={1} useFlexGap>
        <TextField size='small' label={t('token.searchName')} value={keywordInput} onChange={(e) => { setKeywordInput(e.target.value) }} sx={{ flex: 1, minWidth: 0 }} />
        <TextField size='small' label={t('token.searchKey')} value={keyInput} onChange={(e) => { setKeyInput(e.target.value) }} sx={{ flex: 1, minWidth: 0 }} />
        <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
          <Button type='submit' variant='outlined' startIcon={<SearchIcon />}>{t('common.search')}</Button>
          <Button variant='contained' startIcon={<AddIcon />} onClick={drawer.openNew}>{t('token.add')}</Button>
          <Button variant='outlined' startIcon={<ContentCopyIcon />} onClick={() => { void copySelected() }}>{t('token.copySelected')}</Button>
        </Stack>
      </Stack>
      <PagedTable
        ariaLabel={t('token.title')}
        loading={loading}
        columns={[
          { cell: <SelectAllCell selection={selection} shown={items.map((x) => x.id)} label={t('token.selectAll')} /> },
          { label: 'token.col.name' },
          { label: 'token.col.status' },
          { label: 'token.col.quota', nowrap: true },
          { label: 'token.col.created', nowrap: true },
          { label: 'token.col.expiry', nowrap: true },
          { label: 'token.col.actions' }
        ]}
        empty={items.length === 0 && !loading}
        emptyText={t('token.empty')}
        paging={paging}
      >
        {items.map((row) => (
          <TokenRow
            key={row.id}
            row={row}
            selected={selection.selected.has(row.id)}
            onSelect={() => { selection.toggle(row.id) }}
            onViewKey={() => { void viewKey(row) }}
            onCopyKey={() => { void copyKey(row) }}
            onToggle={() => { void toggle(row) }}
            onEdit={() => { drawer.openFor(row.id) }}
            onDelete={() => { void remove(row) }}
          />
        ))}
      </PagedTable>

      <TokenDrawer open={drawer.open} tokenId={drawer.id} onClose={drawer.close} onSaved={saved} />

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

      {confirmDialog}
    </Stack>
  )
}
