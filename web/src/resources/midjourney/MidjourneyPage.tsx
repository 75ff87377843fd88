import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import { useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { isAdmin, useAuth } from '../../auth/AuthContext'
import { PageTitle } from '../../components/PageTitle'
import { PagedTable } from '../../components/PagedTable'
import { TimeCell } from '../../components/columns'
import { DurationCell, ImagePreview, LiveNote, LongTextCell, ProgressCell, Thumbnail } from '../task/cells'
import { isWebUrl } from '../task/results'
import { boundOf, drawingDefaultStart } from '../task/range'
import { channelOf, type TaskFilterForm, TaskFilters } from '../task/TaskFilters'
import { usePagedTasks } from '../task/usePagedTasks'
import { type DrawingQuery, type DrawingTask, listDrawings } from './api'

function StatusChip ({ status }: { status: string }) {
  const { t } = useTranslation()
  switch (status) {
    case 'NOT_START': return <Chip size='small' label={t('midjourney.status.notStart')} />
    case 'SUBMITTED': return <Chip size='small' color='info' variant='outlined' label={t('midjourney.status.submitted')} />
    case 'IN_PROGRESS': return <Chip size='small' color='info' label={t('midjourney.status.inProgress')} />
    case 'MODAL': return <Chip size='small' color='warning' label={t('midjourney.status.modal')} />
    case 'SUCCESS': return <Chip size='small' color='success' label={t('midjourney.status.success')} />
    case 'FAILURE': return <Chip size='small' color='error' label={t('midjourney.status.failure')} />
    default: return <Chip size='small' variant='outlined' label={t('midjourney.status.unknown')} />
  }
}

function CodeChip ({ code }: { code: number }) {
  const { t } = useTranslation()
  switch (code) {
    case 1: return <Chip size='small' color='success' variant='outlined' label={t('midjourney.code.submitted')} />
    case 21: return <Chip size='small' color='info' variant='outlined' label={t('midjourney.code.waiting')} />
    case 22: return <Chip size='small' color='warning' variant='outlined' label={t('midjourney.code.duplicate')} />
    case 0: return <Chip size='small' color='error' variant='outlined' label={t('midjourney.code.notSubmitted')} />
    default: return <Chip size='small' variant='outlined' label={t('midjourney.code.other', { code })} />
  }
}

function ActionLabel ({ action }: { action: string }) {
  const { t } = useTranslation()
  switch (action) {
    case 'IMAGINE': return <>{t('midjourney.action.imagine')}</>
    case 'UPSCALE': return <>{t('midjourney.action.upscale')}</>
    case 'VARIATION': return <>{t('midjourney.action.variation')}</>
    case 'HIGH_VARIATION': return <>{t('midjourney.action.highVariation')}</>
    case 'LOW_VARIATION': return <>{t('midjourney.action.lowVariation')}</>
    case 'PAN': return <>{t('midjourney.action.pan')}</>
    case 'DESCRIBE': return <>{t('midjourney.action.describe')}</>
    case 'BLEND': return <>{t('midjourney.action.blend')}</>
    case 'SHORTEN': return <>{t('midjourney.action.shorten')}</>
    case 'REROLL': return <>{t('midjourney.action.reroll')}</>
    case 'INPAINT': return <>{t('midjourney.action.inpaint')}</>
    case 'ZOOM': return <>{t('midjourney.action.zoom')}</>
    case 'CUSTOM_ZOOM': return <>{t('midjourney.action.customZoom')}</>
    case 'SWAP_FACE': return <>{t('midjourney.action.swapFace')}</>
    case 'UPLOAD': return <>{t('midjourney.action.upload')}</>
    case 'MODAL': return <>{t('midjourney.action.modal')}</>
    default: return <>{action === '' ? '—' : action}</>
  }
}

/** The drawing's thumbnail (a larger preview on click); only web addresses become images and links. */
function ImageCell ({ row, onPreview }: { row: DrawingTask, onPreview: (image: { url: string, title: string }) => void }) {
  const { t } = useTranslation()
  if (!isWebUrl(row.image_url)) return <TableCell sx={{ color: 'text.disabled' }}>—</TableCell>
  return (
    <TableCell>
      <Thumbnail url={row.image_url} label={t('midjourney.openImage', { id: row.mj_id })} onOpen={() => { onPreview({ url: row.image_url, title: row.mj_id }) }} />
    </TableCell>
  )
}

const queryOf = (f: TaskFilterForm): DrawingQuery => ({ start: boundOf(f.start), end: boundOf(f.end), mjId: f.id, channel: channelOf(f.channel) })
const initialForm = (): TaskFilterForm => ({ start: drawingDefaultStart(), end: '', id: '', channel: '' })

/**
 * Drawing (Midjourney) tasks: users see their own; admins everyone's, with
 * channel and submit result. The list refreshes itself while a task on it is unfinished.
 */
export default function MidjourneyPage () {
  const { t } = useTranslation()
  const { user } = useAuth()
  const admin = isAdmin(user)
  const load = useCallback(async (q: DrawingQuery, page: number, size: number) => await listDrawings(admin, q, page, size), [admin])
  const { items, loading, live, paging, filters } = usePagedTasks(load, queryOf, initialForm)
  const [preview, setPreview] = useState<{ url: string, title: string }>()
  const closePreview = useCallback(() => { setPreview(undefined) }, [])

  return (
    <Stack spacing={2}>
      <PageTitle title={t('midjourney.title')} intro={t('midjourney.intro')} />
      <TaskFilters {...filters} idLabel={t('midjourney.mjId')} admin={admin} />
      <LiveNote live={live} />
      <PagedTable
        ariaLabel={t('midjourney.title')}
        loading={loading}
        columns={[
          { label: 'midjourney.col.submitTime', nowrap: true },
          { label: 'midjourney.col.channel', when: admin },
          { label: 'midjourney.col.code', nowrap: true, when: admin },
          { label: 'midjourney.col.action' },
          { label: 'midjourney.col.mjId', nowrap: true },
          { label: 'midjourney.col.status' },
          { label: 'midjourney.col.progress' },
          { label: 'midjourney.col.image' },
          { label: 'midjourney.col.prompt' },
          { label: 'midjourney.col.promptEn', nowrap: true },
          { label: 'midjourney.col.failReason', nowrap: true },
          { label: 'midjourney.col.duration' }
        ]}
        empty={items.length === 0 && !loading}
        emptyText={t('midjourney.empty')}
        paging={paging}
      >
        {items.map((row) => (
          <TableRow hover key={row.id} data-testid={`mj-row-${row.mj_id}`}>
            <TimeCell seconds={row.submit_time} none='—' />
            {admin && <TableCell>{row.channel_id ?? '—'}</TableCell>}
            {admin && <TableCell><CodeChip code={row.code ?? 0} /></TableCell>}
            <TableCell sx={{ whiteSpace: 'nowrap' }}><ActionLabel action={row.action} /></TableCell>
            <TableCell sx={{ fontFamily: 'monospace', overflowWrap: 'anywhere', minWidth: 120 }}>{row.mj_id}</TableCell>
            <TableCell><StatusChip status={row.status} /></TableCell>
            <ProgressCell progress={row.progress} status={row.status} />
            <ImageCell row={row} onPreview={setPreview} />
            <LongTextCell text={row.prompt} label={t('midjourney.col.prompt')} />
            <LongTextCell text={row.prompt_en} label={t('midjourney.col.promptEn')} />
            <LongTextCell text={row.fail_reason} label={t('midjourney.col.failReason')} color='error.main' />
            <DurationCell submit={row.submit_time} finish={row.finish_time} />
          </TableRow>
        ))}
      </PagedTable>
      <ImagePreview image={preview} onClose={closePreview} />
    </Stack>
  )
}
