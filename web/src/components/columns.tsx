import IconButton from '@mui/material/IconButton'
import TableCell from '@mui/material/TableCell'
import Tooltip from '@mui/material/Tooltip'
import { Fragment, type MouseEvent, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { type Column, shownColumns } from '../lib/columns'
import { formatTime } from '../lib/format'

/** The header cells of `columns` (those shown). */
export function HeadCells ({ columns }: { columns: readonly Column[] }) {
  const { t } = useTranslation()
  return shownColumns(columns).map((c, i) => 'cell' in c
    ? <Fragment key={i}>{c.cell}</Fragment>
    : <TableCell key={i} align={c.align} sx={c.nowrap === true ? { whiteSpace: 'nowrap' } : undefined}>{t(c.label)}</TableCell>)
}

/** Unix seconds as local time on one line; `none` (when given) stands for 0 and below ("not yet"). */
export function TimeCell ({ seconds, none }: { seconds: number, none?: string }) {
  return <TableCell sx={{ whiteSpace: 'nowrap' }}>{none !== undefined && seconds <= 0 ? none : formatTime(seconds)}</TableCell>
}

export interface RowActionProps {
  /** The tooltip and the accessible name. */
  label: string
  onClick: (e: MouseEvent<HTMLElement>) => void
  color?: 'error' | 'default'
  disabled?: boolean
  /** The button sits in a span, which keeps the tooltip working while it is disabled. */
  wrapped?: boolean
  children: ReactNode
}

/** A row's icon button with its name as a tooltip. */
export function RowAction ({ label, onClick, color, disabled, wrapped = false, children }: RowActionProps) {
  const button = <IconButton size='small' aria-label={label} color={color} disabled={disabled} onClick={onClick}>{children}</IconButton>
  return <Tooltip title={label}>{wrapped ? <span>{button}</span> : button}</Tooltip>
}
