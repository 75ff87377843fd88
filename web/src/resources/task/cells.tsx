import AutorenewIcon from '@mui/icons-material/Autorenew'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import ButtonBase from '@mui/material/ButtonBase'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import LinearProgress from '@mui/material/LinearProgress'
import Link from '@mui/material/Link'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import Tooltip from '@mui/material/Tooltip'
import Typography from '@mui/material/Typography'
import { type MouseEvent, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { durationOf } from './range'
import { percentOf } from './results'
import { LIVE_REFRESH_MS } from './useLiveRefresh'

/**
 * Long free text (prompts, lyrics, failure reasons): two lines, the whole text on hover, and in a
 * dialog on click (touch screens have no hover). Always text, never HTML.
 */
export function LongText ({ text, label, color }: { text: string, label: string, color?: string }) {
  const { t } = useTranslation()
  const [open, setOpen] = useState(false)
  return (
    <>
      <Tooltip title={<span style={{ whiteSpace: 'pre-wrap' }}>{text}</span>}>
        <ButtonBase onClick={() => { setOpen(true) }} aria-haspopup='dialog' sx={{ display: 'block', textAlign: 'left', width: '100%', borderRadius: 0.5 }}>
          <Typography variant='body2' color={color} sx={{ display: '-webkit-box', WebkitLineClamp: 2, WebkitBoxOrient: 'vertical', overflow: 'hidden', overflowWrap: 'anywhere' }}>
            {text}
          </Typography>
        </ButtonBase>
      </Tooltip>
      <Dialog open={open} onClose={() => { setOpen(false) }} fullWidth maxWidth='sm'>
        <DialogTitle>{label}</DialogTitle>
        <DialogContent>
          <Typography variant='body2' data-testid='full-text' sx={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{text}</Typography>
        </DialogContent>
        <DialogActions><Button onClick={() => { setOpen(false) }}>{t('common.close')}</Button></DialogActions>
      </Dialog>
    </>
  )
}

/** {@link LongText} in a table cell; "—" when empty. */
export function LongTextCell ({ text, label, color, width = 220 }: { text: string, label: string, color?: string, width?: number }) {
  if (text === '') return <TableCell sx={{ color: 'text.disabled' }}>—</TableCell>
  return (
    <TableCell sx={{ minWidth: 140, maxWidth: width }}>
      <LongText text={text} label={label} color={color} />
    </TableCell>
  )
}

/** Submit to finish in seconds, coloured as the log durations are (docs/domain.md). */
export function DurationCell ({ submit, finish }: { submit: number, finish: number }) {
  const { t } = useTranslation()
  const d = durationOf(submit, finish)
  if (d === undefined) return <TableCell sx={{ color: 'text.disabled' }}>—</TableCell>
  const color = d < 101 ? 'success.main' : d < 300 ? 'warning.main' : 'error.main'
  return <TableCell sx={{ whiteSpace: 'nowrap', color }}>{t('task.seconds', { n: d })}</TableCell>
}

/**
 * A task's progress as a bar with its percentage ("45%"), green once succeeded and red once
 * failed; a progress text that is not a number is shown as it is.
 */
export function ProgressCell ({ progress, status }: { progress: string, status: string }) {
  const { t } = useTranslation()
  const percent = percentOf(progress)
  if (progress.trim() === '') return <TableCell sx={{ color: 'text.disabled' }}>—</TableCell>
  if (percent === undefined) return <TableCell sx={{ overflowWrap: 'anywhere', minWidth: 80 }}>{progress}</TableCell>
  const color = status === 'SUCCESS' ? 'success' : status === 'FAILURE' ? 'error' : 'primary'
  return (
    <TableCell sx={{ minWidth: 120 }}>
      <Stack direction='row' spacing={1} sx={{ alignItems: 'center' }}>
        <LinearProgress
          variant='determinate' value={percent} color={color} aria-label={t('task.progressOf', { n: percent })}
          sx={{ flex: '1 1 64px', minWidth: 48, height: 6, borderRadius: 3 }}
        />
        <Typography variant='body2' data-testid='progress-text' sx={{ whiteSpace: 'nowrap', fontVariantNumeric: 'tabular-nums' }}>{`${percent}%`}</Typography>
      </Stack>
    </TableCell>
  )
}

/**
 * A small image that opens `onOpen` (a larger preview) on click; it stays a link to the image, so
 * a middle or modified click still opens it in a new tab. Only http(s) addresses reach here.
 */
export function Thumbnail ({ url, label, onOpen, size = 56 }: { url: string, label: string, onOpen: () => void, size?: number }) {
  const open = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return
    e.preventDefault()
    onOpen()
  }
  return (
    <Link href={url} target='_blank' rel='noopener noreferrer' aria-label={label} onClick={open} sx={{ display: 'inline-block', flexShrink: 0 }}>
      <Box
        component='img' src={url} alt='' loading='lazy' referrerPolicy='no-referrer'
        sx={{ width: size, height: size, objectFit: 'cover', borderRadius: 1, display: 'block', bgcolor: 'action.hover' }}
      />
    </Link>
  )
}

/** A larger view of an image (a drawing, a song's cover), with a link to the original. */
export function ImagePreview ({ image, onClose }: { image: { url: string, title: string } | undefined, onClose: () => void }) {
  const { t } = useTranslation()
  return (
    <Dialog open={image !== undefined} onClose={onClose} maxWidth='md' fullWidth>
      <DialogTitle sx={{ overflowWrap: 'anywhere' }}>{image?.title}</DialogTitle>
      <DialogContent>
        {image !== undefined && (
          <Box
            component='img' src={image.url} alt={image.title} referrerPolicy='no-referrer' data-testid='image-preview'
            sx={{ display: 'block', mx: 'auto', maxWidth: '100%', maxHeight: '70vh', objectFit: 'contain', borderRadius: 1 }}
          />
        )}
      </DialogContent>
      <DialogActions>
        {image !== undefined && <Button component='a' href={image.url} target='_blank' rel='noopener noreferrer'>{t('task.openOriginal')}</Button>}
        <Button onClick={onClose}>{t('common.close')}</Button>
      </DialogActions>
    </Dialog>
  )
}

/** Says that the list is refreshing itself (while a task on the page is unfinished). */
export function LiveNote ({ live }: { live: boolean }) {
  const { t } = useTranslation()
  if (!live) return null
  return (
    <Stack direction='row' spacing={0.5} sx={{ alignItems: 'center', color: 'text.secondary' }} data-testid='task-live' role='status'>
      <AutorenewIcon fontSize='small' />
      <Typography variant='caption'>{t('task.live', { n: LIVE_REFRESH_MS / 1000 })}</Typography>
    </Stack>
  )
}
