import { REDEMPTION_STATUS, type RedemptionView } from '@modelgate/contracts'
import Checkbox from '@mui/material/Checkbox'
import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import Tooltip from '@mui/material/Tooltip'
import BlockIcon from '@mui/icons-material/Block'
import CheckCircleIcon from '@mui/icons-material/CheckCircleOutlineOutlined'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import DeleteIcon from '@mui/icons-material/DeleteOutlineOutlined'
import EditIcon from '@mui/icons-material/EditOutlined'
import VisibilityIcon from '@mui/icons-material/VisibilityOutlined'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { RowAction, TimeCell } from '../../components/columns'
import { formatTime, renderQuota } from '../../lib/format'

function StatusChip ({ row }: { row: RedemptionView }) {
  const { t } = useTranslation()
  switch (row.status) {
    case REDEMPTION_STATUS.unused: return <Chip size='small' color='success' label={t('redemption.status.unused')} />
    case REDEMPTION_STATUS.disabled: return <Chip size='small' color='warning' label={t('redemption.status.disabled')} />
    case REDEMPTION_STATUS.used: {
      const chip = <Chip size='small' label={t('redemption.status.used')} />
      return row.redeemed_time > 0 ? <Tooltip title={t('redemption.redeemedAt', { time: formatTime(row.redeemed_time) })}>{chip}</Tooltip> : chip
    }
    default: return <Chip size='small' variant='outlined' label={t('redemption.status.unknown')} />
  }
}

export interface RedemptionRowProps {
  row: RedemptionView
  selected: boolean
  onSelect: () => void
  onView: () => void
  onCopy: () => void
  onDelete: () => void
  onToggle: () => void
  onEdit: () => void
}

/** One code; a used code can be neither enabled nor edited (docs/domain.md). */
export function RedemptionRow ({ row, selected, onSelect, onView, onCopy, onDelete, onToggle, onEdit }: RedemptionRowProps) {
  const { t } = useTranslation()
  const { status } = useStatus()
  return (
    <TableRow hover selected={selected} data-testid={`redemption-row-${row.id}`}>
      <TableCell padding='checkbox'>
        <Checkbox checked={selected} onChange={onSelect} slotProps={{ input: { 'aria-label': t('redemption.selectRow', { id: row.id }) } }} />
      </TableCell>
      <TableCell>{row.id}</TableCell>
      <TableCell sx={{ minWidth: 100, maxWidth: 220, overflowWrap: 'anywhere' }}>{row.name}</TableCell>
      <TableCell><StatusChip row={row} /></TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{renderQuota(row.quota, status)}</TableCell>
      <TimeCell seconds={row.created_time} />
      <TableCell>{row.used_user_id === 0 ? t('common.none') : row.used_user_id}</TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>
        <Stack direction='row' spacing={0.25}>
          <RowAction label={t('redemption.action.view')} onClick={onView}><VisibilityIcon fontSize='small' /></RowAction>
          <RowAction label={t('redemption.action.copy')} onClick={onCopy}><ContentCopyIcon fontSize='small' /></RowAction>
          <RowAction label={t('redemption.action.delete')} color='error' onClick={onDelete}><DeleteIcon fontSize='small' /></RowAction>
          {row.status === REDEMPTION_STATUS.unused && <RowAction label={t('redemption.action.disable')} onClick={onToggle}><BlockIcon fontSize='small' /></RowAction>}
          {row.status === REDEMPTION_STATUS.disabled && <RowAction label={t('redemption.action.enable')} onClick={onToggle}><CheckCircleIcon fontSize='small' /></RowAction>}
          {row.status === REDEMPTION_STATUS.unused && <RowAction label={t('redemption.action.edit')} onClick={onEdit}><EditIcon fontSize='small' /></RowAction>}
        </Stack>
      </TableCell>
    </TableRow>
  )
}
