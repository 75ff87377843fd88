import { ROLES, USER_STATUS, type UserView } from '@modelgate/contracts'
import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import Typography from '@mui/material/Typography'
import ArrowCircleDownIcon from '@mui/icons-material/ArrowCircleDownOutlined'
import ArrowCircleUpIcon from '@mui/icons-material/ArrowCircleUpOutlined'
import BlockIcon from '@mui/icons-material/Block'
import CheckCircleIcon from '@mui/icons-material/CheckCircleOutlineOutlined'
import EditIcon from '@mui/icons-material/EditOutlined'
import PersonRemoveIcon from '@mui/icons-material/PersonRemoveOutlined'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { RowAction, type RowActionProps } from '../../components/columns'
import { renderNumber, renderQuota } from '../../lib/format'
import { TwoFactorChip } from '../two-factor/AdminTwoFactor'
import type { ManageAction } from './api'
import { roleKey, rowActions } from './rules'

function RoleChip ({ role }: { role: number }) {
  const { t } = useTranslation()
  const color = role >= ROLES.root ? 'error' : role >= ROLES.admin ? 'warning' : 'default'
  return <Chip size='small' variant='outlined' color={color} label={t(roleKey(role))} />
}

function StatusChip ({ status, deleted }: { status: number, deleted: boolean }) {
  const { t } = useTranslation()
  if (deleted) return <Chip size='small' color='default' variant='outlined' label={t('user.status.deleted')} />
  if (status === USER_STATUS.enabled) return <Chip size='small' color='success' label={t('user.status.active')} />
  if (status === USER_STATUS.disabled) return <Chip size='small' color='error' label={t('user.status.banned')} />
  return <Chip size='small' label={t('user.status.other')} />
}

/** The span keeps the tooltip working on a disabled button. */
const Action = (props: Omit<RowActionProps, 'wrapped'>) => <RowAction {...props} wrapped />

export interface UserRowProps {
  row: UserView
  /** The signed-in admin's role. */
  actorRole: number
  onAction: (action: ManageAction) => void
  onEdit: () => void
}

/** One user with the actions the signed-in admin may take on it (docs/domain.md). */
export function UserRow ({ row, actorRole, onAction, onEdit }: UserRowProps) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const deleted = row.deleted_at !== null
  const can = rowActions({ role: actorRole }, { role: row.role, status: row.status, deleted })
  const any = can.promote || can.demote || can.toggle !== undefined || can.edit || can.delete
  return (
    <TableRow hover data-testid={`user-row-${row.id}`}>
      <TableCell>{row.id}</TableCell>
      <TableCell sx={{ minWidth: 120, maxWidth: 220, overflowWrap: 'anywhere' }}>
        <Typography variant='body2' sx={{ fontWeight: 500 }}>{row.username}</Typography>
        {row.display_name !== '' && row.display_name !== row.username && (
          <Typography variant='caption' color='text.secondary'>{row.display_name}</Typography>
        )}
      </TableCell>
      <TableCell><Chip size='small' variant='outlined' label={row.group} /></TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }} title={t('user.quotaTitle')}>
        {renderQuota(row.quota, status)} / {renderQuota(row.used_quota, status)}
      </TableCell>
      <TableCell>{renderNumber(row.request_count)}</TableCell>
      <TableCell><RoleChip role={row.role} /></TableCell>
      <TableCell>
        <Stack direction='row' spacing={0.5} useFlexGap sx={{ flexWrap: 'wrap' }}><StatusChip status={row.status} deleted={deleted} /><TwoFactorChip user={row} /></Stack>
      </TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>
        {any
          ? (
            <Stack direction='row' spacing={0.25}>
              {can.promote && <Action label={t('user.action.promote')} onClick={() => { onAction('promote') }}><ArrowCircleUpIcon fontSize='small' /></Action>}
              {can.demote && <Action label={t('user.action.demote')} onClick={() => { onAction('demote') }}><ArrowCircleDownIcon fontSize='small' /></Action>}
              {can.toggle === 'disable' && <Action label={t('user.action.disable')} onClick={() => { onAction('disable') }}><BlockIcon fontSize='small' /></Action>}
              {can.toggle === 'enable' && (
                <Action label={t('user.action.enable')} disabled={can.toggleDisabled} onClick={() => { onAction('enable') }}><CheckCircleIcon fontSize='small' /></Action>
              )}
              {can.edit && <Action label={t('user.action.edit')} onClick={onEdit}><EditIcon fontSize='small' /></Action>}
              {can.delete && <Action label={t('user.action.delete')} color='error' onClick={() => { onAction('delete') }}><PersonRemoveIcon fontSize='small' /></Action>}
            </Stack>
            )
          : <Typography variant='body2' color='text.disabled' title={t('user.noActions')} aria-label={t('user.noActions')}>—</Typography>}
      </TableCell>
    </TableRow>
  )
}
