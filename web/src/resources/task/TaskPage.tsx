import Box from '@mui/material/Box'
import Chip from '@mui/material/Chip'
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
import Typography from '@mui/material/Typography'
import { useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { isAdmin, useAuth } from '../../auth/AuthContext'
import { PAGE_SIZES } from '../../lib/usePersistentState'
import { listTasks, type TaskQuery, type TaskRow } from './api'
import { DurationCell, LongTextCell, TimeCell } from './cells'
import { boundOf, musicDefaultStart } from './range'
import { channelOf, type TaskFilterForm, TaskFilters } from './TaskFilters'
import { usePagedTasks } from './usePagedTasks'

function StatusChip ({ status }: { status: string }) {
  const { t } = useTranslation()
  switch (status) {
    case '': return <Chip size='small' variant='outlined' label={t('task.status.submitting')} />
    case 'NOT_START': return <Chip size='small' label={t('task.status.notStart')} />
    case 'SUBMITTED': return <Chip size='small' color='info' variant='outlined' label={t('task.status.submitted')} />
    case 'QUEUED': return <Chip size='small' color='secondary' variant='outlined' label={t('task.status.queued')} />
    case 'IN_PROGRESS': return <Chip size='small' color='info' label={t('task.status.inProgress')} />
    case 'SUCCESS': return <Chip size='small' color='success' label={t('task.status.success')} />
    case 'FAILURE': return <Chip size='small' color='error' label={t('task.status.failure')} />
    default: return <Chip size='small' variant='outlined' label={t('task.status.unknown')} />
  }
}

function ActionLabel ({ action }: { action: string }) {
  const { t } = useTranslation()
  if (action === 'MUSIC') return <>{t('task.action.music')}</>
  if (action === 'LYRICS') return <>{t('task.action.lyrics')}</>
  return <>{action === '' ? '—' : action}</>
}

const queryOf = (f: TaskFilterForm): TaskQuery => ({ start: boundOf(f.start), end: boundOf(f.end), taskId: f.id, channel: channelOf(f.channel) })
const initialForm = (): TaskFilterForm => ({ start: musicDefaultStart(), end: '', id: '', channel: '' })

/** Music (Suno) tasks (SPEC.md section 2): users see their own; admins everyone's, with channels. */
export default function TaskPage () {
  const { t } = useTranslation()
  const { user } = useAuth()
  const admin = isAdmin(user)
  const [form, setForm] = useState<TaskFilterForm>(initialForm)
  const load = useCallback(async (q: TaskQuery, page: number, size: number) => await listTasks(admin, q, page, size), [admin])
  const { items, total, loading, page, setPage, size, setSize, search } = usePagedTasks(load, () => queryOf(form))
  const columns = admin ? 10 : 9

  return (
    <Stack spacing={2}>
      <Box>
        <Typography variant='h5' component='h1'>{t('task.title')}</Typography>
        <Typography variant='body2' color='text.secondary'>{t('task.intro')}</Typography>
      </Box>
      <TaskFilters
        form={form}
        onChange={setForm}
        onSubmit={() => { search(queryOf(form)) }}
        onReset={() => { const f = initialForm(); setForm(f); search(queryOf(f)) }}
        idLabel={t('task.filter.taskId')}
        admin={admin}
      />
      <Paper sx={{ minWidth: 0 }}>
        {loading && <LinearProgress />}
        <TableContainer sx={{ overflowX: 'auto' }}>
          <Table size='small' aria-label={t('task.title')}>
            <TableHead>
              <TableRow>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{t('task.col.submitTime')}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{t('task.col.finishTime')}</TableCell>
                <TableCell>{t('task.col.duration')}</TableCell>
                {admin && <TableCell>{t('task.col.channel')}</TableCell>}
                <TableCell>{t('task.col.platform')}</TableCell>
                <TableCell>{t('task.col.action')}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{t('task.col.taskId')}</TableCell>
                <TableCell>{t('task.col.status')}</TableCell>
                <TableCell>{t('task.col.progress')}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{t('task.col.failReason')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {items.map((row: TaskRow) => (
                <TableRow hover key={row.id} data-testid={`task-row-${row.task_id}`}>
                  <TimeCell seconds={row.submit_time} />
                  <TimeCell seconds={row.finish_time} />
                  <DurationCell submit={row.submit_time} finish={row.finish_time} />
                  {admin && <TableCell>{row.channel_id ?? '—'}</TableCell>}
                  <TableCell>{row.platform}</TableCell>
                  <TableCell sx={{ whiteSpace: 'nowrap' }}><ActionLabel action={row.action} /></TableCell>
                  <TableCell sx={{ fontFamily: 'monospace', overflowWrap: 'anywhere', minWidth: 120 }}>{row.task_id}</TableCell>
                  <TableCell><StatusChip status={row.status} /></TableCell>
                  <TableCell>{row.progress === '' ? '—' : row.progress}</TableCell>
                  <LongTextCell text={row.fail_reason} />
                </TableRow>
              ))}
              {items.length === 0 && !loading && (
                <TableRow>
                  <TableCell colSpan={columns} align='center' sx={{ py: 4, color: 'text.secondary' }}>{t('task.empty')}</TableCell>
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
          onRowsPerPageChange={(e) => { setSize(Number(e.target.value)) }}
          labelRowsPerPage={t('common.rowsPerPage')}
          labelDisplayedRows={({ from, to, count }) => t('task.displayedRows', { from, to, count })}
          sx={{ overflowX: 'auto' }}
        />
      </Paper>
    </Stack>
  )
}
