import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import { useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { isAdmin, useAuth } from '../../auth/AuthContext'
import { PageTitle } from '../../components/PageTitle'
import { PagedTable } from '../../components/PagedTable'
import { listTasks, type TaskQuery, type TaskRow } from './api'
import { TimeCell } from '../../components/columns'
import { DurationCell, ImagePreview, LiveNote, LongTextCell, ProgressCell } from './cells'
import { boundOf, musicDefaultStart } from './range'
import { channelOf, type TaskFilterForm, TaskFilters } from './TaskFilters'
import { type PreviewImage, TaskResultCell } from './TaskResult'
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

function ActionLabel ({ action, platform }: { action: string, platform: string }) {
  const { t } = useTranslation()
  if (action === 'MUSIC') return <>{t('task.action.music')}</>
  if (action === 'LYRICS') return <>{t('task.action.lyrics')}</>
  if (platform === 'video' && ['', 'VIDEO', 'GENERATE'].includes(action.toUpperCase())) return <>{t('task.action.video')}</>
  if (platform === 'video' && action.toUpperCase() === 'REMIX') return <>{t('task.action.remix')}</>
  return <>{action === '' ? '—' : action}</>
}

function PlatformLabel ({ platform }: { platform: string }) {
  const { t } = useTranslation()
  if (platform === 'suno') return <>{t('task.platform.suno')}</>
  if (platform === 'video') return <>{t('task.platform.video')}</>
  return <>{platform}</>
}

const queryOf = (f: TaskFilterForm): TaskQuery => ({ start: boundOf(f.start), end: boundOf(f.end), taskId: f.id, channel: channelOf(f.channel) })
const initialForm = (): TaskFilterForm => ({ start: musicDefaultStart(), end: '', id: '', channel: '' })

/**
 * Music (Suno) and video tasks: users see their own; admins everyone's, with
 * channels. Songs play in the page; the list refreshes itself while a task on it is unfinished.
 */
export default function TaskPage () {
  const { t } = useTranslation()
  const { user } = useAuth()
  const admin = isAdmin(user)
  const load = useCallback(async (q: TaskQuery, page: number, size: number) => await listTasks(admin, q, page, size), [admin])
  const { items, loading, live, paging, filters } = usePagedTasks(load, queryOf, initialForm)
  const [preview, setPreview] = useState<PreviewImage>()
  const closePreview = useCallback(() => { setPreview(undefined) }, [])

  return (
    <Stack spacing={2}>
      <PageTitle title={t('task.title')} intro={t('task.intro')} />
      <TaskFilters {...filters} idLabel={t('task.filter.taskId')} admin={admin} />
      <LiveNote live={live} />
      <PagedTable
        ariaLabel={t('task.title')}
        loading={loading}
        columns={[
          { label: 'task.col.submitTime', nowrap: true },
          { label: 'task.col.finishTime', nowrap: true },
          { label: 'task.col.duration' },
          { label: 'task.col.channel', when: admin },
          { label: 'task.col.platform' },
          { label: 'task.col.action' },
          { label: 'task.col.taskId', nowrap: true },
          { label: 'task.col.status' },
          { label: 'task.col.progress' },
          { label: 'task.col.result' },
          { label: 'task.col.failReason', nowrap: true }
        ]}
        empty={items.length === 0 && !loading}
        emptyText={t('task.empty')}
        paging={paging}
      >
        {items.map((row: TaskRow) => (
          <TableRow hover key={row.id} data-testid={`task-row-${row.task_id}`}>
            <TimeCell seconds={row.submit_time} none='—' />
            <TimeCell seconds={row.finish_time} none='—' />
            <DurationCell submit={row.submit_time} finish={row.finish_time} />
            {admin && <TableCell>{row.channel_id ?? '—'}</TableCell>}
            <TableCell><PlatformLabel platform={row.platform} /></TableCell>
            <TableCell sx={{ whiteSpace: 'nowrap' }}><ActionLabel action={row.action} platform={row.platform} /></TableCell>
            <TableCell sx={{ fontFamily: 'monospace', overflowWrap: 'anywhere', minWidth: 120 }}>{row.task_id}</TableCell>
            <TableCell><StatusChip status={row.status} /></TableCell>
            <ProgressCell progress={row.progress} status={row.status} />
            <TaskResultCell row={row} onPreview={setPreview} />
            <LongTextCell text={row.fail_reason} label={t('task.col.failReason')} color='error.main' />
          </TableRow>
        ))}
      </PagedTable>
      <ImagePreview image={preview} onClose={closePreview} />
    </Stack>
  )
}
