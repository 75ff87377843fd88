import type { UserView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
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
import SearchIcon from '@mui/icons-material/Search'
import { type FormEvent, useCallback, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Navigate, useLocation, useNavigate, useParams } from 'react-router-dom'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { PAGE_SIZES, usePageSize } from '../../lib/usePersistentState'
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

/**
 * User management (SPEC.md section 2): /user lists, /user/edit/{id} opens the edit drawer over
 * the list. /user/edit without an id means "edit myself", which is personal settings.
 */
export default function UserPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const { user } = useAuth()
  const navigate = useNavigate()
  const location = useLocation()
  const params = useParams()
  const editId = params.id === undefined ? undefined : Number(params.id)
  // The user screen keeps its own size, 50 by default (SPEC.md section 9).
  const [size, setSize] = usePageSize('user-page-size', 50)
  const [page, setPage] = useState(1)
  const [keywordInput, setKeywordInput] = useState('')
  const [keyword, setKeyword] = useState({ text: '' })
  const [items, setItems] = useState<UserView[]>([])
  const [total, setTotal] = useState(0)
  const [loading, setLoading] = useState(false)
  const [generation, setGeneration] = useState(0)
  const [adding, setAdding] = useState(false)
  const [deleting, setDeleting] = useState<UserView | undefined>()
  const reload = useCallback(() => { setGeneration((g) => g + 1) }, [])

  useEffect(() => {
    let live = true
    setLoading(true)
    listUsers({ page, size, keyword: keyword.text }).then((p) => {
      if (!live) return
      if (p.items.length === 0 && page > 1) {
        setPage(page - 1)
        return
      }
      setItems(p.items)
      setTotal(p.total)
    }, (err: unknown) => { if (live) notify.error(err) }).finally(() => { if (live) setLoading(false) })
    return () => { live = false }
  }, [page, size, keyword, generation, notify])

  const search = (e: FormEvent) => {
    e.preventDefault()
    setPage(1)
    // A new object even when unchanged: searching again refreshes the list.
    setKeyword({ text: keywordInput })
  }

  const manage = async (row: UserView, action: ManageAction) => {
    try {
      const after = await manageUser(row.id, action)
      // The server answers the user's new state: show that rather than guessing it.
      setItems((list) => list.map((u) => u.id === row.id
        ? { ...u, status: after.status, role: after.role, deleted_at: after.deleted ? Math.floor(Date.now() / 1000) : null }
        : u))
      notify.success(t(DONE[action]))
    } catch (err) {
      notify.error(err)
    }
  }

  const confirmDelete = async () => {
    const row = deleting
    setDeleting(undefined)
    if (row !== undefined) await manage(row, 'delete')
  }

  const closeEdit = useCallback(() => { navigate('/user') }, [navigate])
  const saved = useCallback((u: UserView) => {
    setItems((list) => list.map((x) => x.id === u.id ? u : x))
    navigate('/user')
  }, [navigate])

  if (location.pathname.replace(/\/$/, '') === '/user/edit' && editId === undefined) return <Navigate to='/setting' replace />

  return (
    <Stack spacing={2}>
      <Box>
        <Typography variant='h5' component='h1'>{t('user.title')}</Typography>
        <Typography variant='body2' color='text.secondary'>{t('user.intro')}</Typography>
      </Box>
      <Stack component='form' onSubmit={search} direction={{ xs: 'column', sm: 'row' }} spacing={1} useFlexGap>
        <TextField size='small' label={t('user.search')} value={keywordInput} onChange={(e) => { setKeywordInput(e.target.value) }} sx={{ flex: 1, minWidth: 0 }} />
        <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
          <Button type='submit' variant='outlined' startIcon={<SearchIcon />}>{t('common.search')}</Button>
          <Button variant='contained' startIcon={<AddIcon />} onClick={() => { setAdding(true) }}>{t('user.add')}</Button>
        </Stack>
      </Stack>
      <Paper sx={{ minWidth: 0 }}>
        {loading && <LinearProgress />}
        <TableContainer sx={{ overflowX: 'auto' }}>
          <Table size='small' aria-label={t('user.title')}>
            <TableHead>
              <TableRow>
                <TableCell>{t('user.col.id')}</TableCell>
                <TableCell>{t('user.col.username')}</TableCell>
                <TableCell>{t('user.col.group')}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{t('user.col.quota')}</TableCell>
                <TableCell>{t('user.col.requests')}</TableCell>
                <TableCell>{t('user.col.role')}</TableCell>
                <TableCell>{t('user.col.status')}</TableCell>
                <TableCell>{t('user.col.actions')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {items.map((row) => (
                <UserRow
                  key={row.id}
                  row={row}
                  actorRole={user?.role ?? 0}
                  onAction={(action) => { if (action === 'delete') setDeleting(row); else void manage(row, action) }}
                  onEdit={() => { navigate(`/user/edit/${row.id}`) }}
                />
              ))}
              {items.length === 0 && !loading && (
                <TableRow>
                  <TableCell colSpan={8} align='center' sx={{ py: 4, color: 'text.secondary' }}>{t('user.empty')}</TableCell>
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
          labelDisplayedRows={({ from, to, count }) => t('user.displayedRows', { from, to, count })}
          sx={{ overflowX: 'auto' }}
        />
      </Paper>

      <AddUserDrawer open={adding} onClose={() => { setAdding(false) }} onSaved={() => { setAdding(false); reload() }} />
      <EditUserDrawer userId={editId !== undefined && Number.isInteger(editId) && editId > 0 ? editId : undefined} onClose={closeEdit} onSaved={saved} />

      <Dialog open={deleting !== undefined} onClose={() => { setDeleting(undefined) }}>
        <DialogTitle>{t('user.deleteTitle')}</DialogTitle>
        <DialogContent>
          <DialogContentText>{t('user.deleteBody', { name: deleting?.username ?? '' })}</DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => { setDeleting(undefined) }}>{t('common.cancel')}</Button>
          <Button color='error' variant='contained' onClick={() => { void confirmDelete() }}>{t('user.action.delete')}</Button>
        </DialogActions>
      </Dialog>
    </Stack>
  )
}
