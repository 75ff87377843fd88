import type { UserView } from '@modelgate/contracts'
import Button from '@mui/material/Button'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import AddIcon from '@mui/icons-material/Add'
import SearchIcon from '@mui/icons-material/Search'
import { type FormEvent, useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Navigate, useLocation } from 'react-router-dom'
import { useAuth } from '../../auth/AuthContext'
import { useConfirm } from '../../components/Confirm'
import { PageTitle } from '../../components/PageTitle'
import { PagedTable } from '../../components/PagedTable'
import type { Column } from '../../lib/columns'
import { useAction } from '../../lib/useAction'
import { useDrawer, useRouteDrawer } from '../../lib/useDrawer'
import { usePagedList } from '../../lib/usePagedList'
import { TwoFactorStatsLine } from '../two-factor/AdminTwoFactor'
import { listUsers, type ManageAction, manageUser } from './api'
import { AddUserDrawer, EditUserDrawer } from './UserDrawers'
import { UserRow } from './UserRow'

const DONE = {
  promote: 'user.done.promote',
  demote: 'user.done.demote',
  enable: 'user.done.enable',
  disable: 'user.done.disable',
  delete: 'user.done.delete'
} as const

const COLUMNS: Column[] = [
  { label: 'user.col.id' },
  { label: 'user.col.username' },
  { label: 'user.col.group' },
  { label: 'user.col.quota', nowrap: true },
  { label: 'user.col.requests' },
  { label: 'user.col.role' },
  { label: 'user.col.status' },
  { label: 'user.col.actions' }
]

/**
 * User management: /user lists, /user/edit/{id} opens the edit drawer over
 * the list. /user/edit without an id means "edit myself", which is personal settings.
 */
export default function UserPage () {
  const { t } = useTranslation()
  const { user } = useAuth()
  const location = useLocation()
  const [keywordInput, setKeywordInput] = useState('')
  const [keyword, setKeyword] = useState({ text: '' })
  const [confirm, confirmDialog] = useConfirm()
  const load = useCallback(async (page: number, size: number) => await listUsers({ page, size, keyword: keyword.text }), [keyword])
  // The user screen keeps its own size, 50 by default (docs/domain.md).
  const { items, setItems, loading, setPage, reload, paging } = usePagedList(load, { sizeKey: 'user-page-size', sizeDefault: 50 })
  const { act } = useAction()
  const adding = useDrawer(reload)
  // /user/edit/{id} opens the edit drawer over the list.
  const editing = useRouteDrawer('/user')

  const search = (e: FormEvent) => {
    e.preventDefault()
    setPage(1)
    // A new object even when unchanged: searching again refreshes the list.
    setKeyword({ text: keywordInput })
  }

  const manage = async (row: UserView, action: ManageAction) => {
    await act(async () => {
      const after = await manageUser(row.id, action)
      // The server answers the user's new state: show that rather than guessing it.
      setItems((list) => list.map((u) => u.id === row.id
        ? { ...u, status: after.status, role: after.role, deleted_at: after.deleted ? Math.floor(Date.now() / 1000) : null }
        : u))
    }, { done: t(DONE[action]) })
  }

  const remove = async (row: UserView) => {
    const ok = await confirm({ title: t('user.deleteTitle'), body: t('user.deleteBody', { name: row.username }), action: t('user.action.delete'), danger: true })
    if (ok) await manage(row, 'delete')
  }

  const { close: closeEdit } = editing
  const saved = useCallback((u: UserView) => {
    // The saved user has no two_fa_enabled (only the list and view carry it): keep the list's.
    setItems((list) => list.map((x) => x.id === u.id ? { ...x, ...u } : x))
    closeEdit()
  }, [closeEdit, setItems])

  if (location.pathname.replace(/\/$/, '') === '/user/edit') return <Navigate to='/setting' replace />

  return (
    <Stack spacing={2}>
      <PageTitle title={t('user.title')} intro={t('user.intro')} />
      <TwoFactorStatsLine />
      <Stack component='form' onSubmit={search} direction={{ xs: 'column', sm: 'row' }} spacing={1} useFlexGap>
        <TextField size='small' label={t('user.search')} value={keywordInput} onChange={(e) => { setKeywordInput(e.target.value) }} sx={{ flex: 1, minWidth: 0 }} />
        <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
          <Button type='submit' variant='outlined' startIcon={<SearchIcon />}>{t('common.search')}</Button>
          <Button variant='contained' startIcon={<AddIcon />} onClick={adding.openNew}>{t('user.add')}</Button>
        </Stack>
      </Stack>
      <PagedTable
        ariaLabel={t('user.title')}
        loading={loading}
        columns={COLUMNS}
        empty={items.length === 0 && !loading}
        emptyText={t('user.empty')}
        paging={paging}
      >
        {items.map((row) => (
          <UserRow
            key={row.id}
            row={row}
            actorRole={user?.role ?? 0}
            onAction={(action) => { if (action === 'delete') void remove(row); else void manage(row, action) }}
            onEdit={() => { editing.openFor(row.id) }}
          />
        ))}
      </PagedTable>

      <AddUserDrawer open={adding.open} onClose={adding.close} onSaved={adding.saved} />
      <EditUserDrawer userId={editing.open ? editing.id : undefined} onClose={closeEdit} onSaved={saved} />

      {confirmDialog}
    </Stack>
  )
}
