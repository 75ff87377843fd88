import Box from '@mui/material/Box'
import Link from '@mui/material/Link'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import Typography from '@mui/material/Typography'
import { useTranslation } from 'react-i18next'
import type { TaskRow } from './api'
import { LongText, Thumbnail } from './cells'
import { clipsOf, lyricsOf, videoUrlOf } from './results'

export interface PreviewImage { url: string, title: string }

/** One song: its cover (a larger preview on click), title, tags, a player and its video. */
function ClipView ({ clip, index, taskId, onPreview }: { clip: ReturnType<typeof clipsOf>[number], index: number, taskId: string, onPreview: (image: PreviewImage) => void }) {
  const { t } = useTranslation()
  const title = clip.title ?? t('task.result.song', { n: index + 1 })
  return (
    <Stack direction='row' spacing={1} sx={{ alignItems: 'center' }} data-testid='task-clip'>
      {clip.imageUrl !== undefined
        ? <Thumbnail url={clip.imageUrl} size={48} label={t('task.result.cover', { title })} onOpen={() => { onPreview({ url: clip.imageUrl!, title: `${taskId} · ${title}` }) }} />
        : <Box sx={{ width: 48, height: 48, flexShrink: 0, borderRadius: 1, bgcolor: 'action.hover' }} />}
      <Stack spacing={0.25} sx={{ minWidth: 0 }}>
        <Typography variant='body2' sx={{ fontWeight: 500, overflowWrap: 'anywhere' }}>{title}</Typography>
        {clip.tags !== undefined && <Typography variant='caption' color='text.secondary' sx={{ overflowWrap: 'anywhere' }}>{clip.tags}</Typography>}
        {clip.audioUrl !== undefined && (
          <Box component='audio' controls preload='none' src={clip.audioUrl} aria-label={t('task.result.play', { title })} sx={{ width: 240, maxWidth: '100%', height: 32 }} />
        )}
        {clip.videoUrl !== undefined && (
          <Link href={clip.videoUrl} target='_blank' rel='noopener noreferrer' variant='caption'>{t('task.result.clipVideo')}</Link>
        )}
      </Stack>
    </Stack>
  )
}

/**
 * What a task produced, as far as its stored data say: the songs of a music task, the text of a
 * lyrics task, the address of a video when the data carry one; "—" otherwise (an OpenAI-style video
 * object carries none: its content is fetched through the API with a key).
 */
export function TaskResultCell ({ row, onPreview }: { row: TaskRow, onPreview: (image: PreviewImage) => void }) {
  const { t } = useTranslation()
  const none = <TableCell sx={{ color: 'text.disabled' }}>—</TableCell>
  if (row.platform === 'video') {
    const url = videoUrlOf(row.data)
    if (url === undefined) return none
    return (
      <TableCell>
        <Link href={url} target='_blank' rel='noopener noreferrer' sx={{ whiteSpace: 'nowrap' }}>{t('task.result.video')}</Link>
      </TableCell>
    )
  }
  const clips = clipsOf(row.data)
  if (clips.length > 0) {
    return (
      <TableCell sx={{ minWidth: 300 }}>
        <Stack spacing={1}>
          {clips.map((clip, i) => <ClipView key={clip.id ?? i} clip={clip} index={i} taskId={row.task_id} onPreview={onPreview} />)}
        </Stack>
      </TableCell>
    )
  }
  const lyrics = lyricsOf(row.data)
  if (lyrics.length > 0) {
    return (
      <TableCell sx={{ minWidth: 180, maxWidth: 260 }}>
        <Stack spacing={1}>
          {lyrics.map((l, i) => (
            <Box key={i}>
              {l.title !== undefined && <Typography variant='body2' sx={{ fontWeight: 500, overflowWrap: 'anywhere' }}>{l.title}</Typography>}
              <LongText text={l.text} label={l.title ?? t('task.result.lyrics')} />
            </Box>
          ))}
        </Stack>
      </TableCell>
    )
  }
  return none
}
