import TableCell from '@mui/material/TableCell'
import Tooltip from '@mui/material/Tooltip'
import Typography from '@mui/material/Typography'
import { useTranslation } from 'react-i18next'
import { formatTime } from '../../lib/format'
import { durationOf } from './range'

/** Long free text (prompts, failure reasons): two lines in the table, the whole text on hover. */
export function LongTextCell ({ text, width = 220 }: { text: string, width?: number }) {
  if (text === '') return <TableCell sx={{ color: 'text.disabled' }}>—</TableCell>
  return (
    <TableCell sx={{ minWidth: 140, maxWidth: width }}>
      <Tooltip title={<span style={{ whiteSpace: 'pre-wrap' }}>{text}</span>}>
        <Typography variant='body2' sx={{ display: '-webkit-box', WebkitLineClamp: 2, WebkitBoxOrient: 'vertical', overflow: 'hidden', overflowWrap: 'anywhere' }}>
          {text}
        </Typography>
      </Tooltip>
    </TableCell>
  )
}

/** Unix seconds as local time; 0 is "not yet". */
export function TimeCell ({ seconds }: { seconds: number }) {
  return <TableCell sx={{ whiteSpace: 'nowrap' }}>{seconds > 0 ? formatTime(seconds) : '—'}</TableCell>
}

/** Submit to finish in seconds, coloured as the log durations are (SPEC.md section 9). */
export function DurationCell ({ submit, finish }: { submit: number, finish: number }) {
  const { t } = useTranslation()
  const d = durationOf(submit, finish)
  if (d === undefined) return <TableCell sx={{ color: 'text.disabled' }}>—</TableCell>
  const color = d < 101 ? 'success.main' : d < 300 ? 'warning.main' : 'error.main'
  return <TableCell sx={{ whiteSpace: 'nowrap', color }}>{t('task.seconds', { n: d })}</TableCell>
}
