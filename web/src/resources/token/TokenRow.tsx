import { TOKEN_STATUS, type TokenView } from '@modelgate/contracts'
import Checkbox from '@mui/material/Checkbox'
import Chip from '@mui/material/Chip'
import Menu from '@mui/material/Menu'
import MenuItem from '@mui/material/MenuItem'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import BlockIcon from '@mui/icons-material/Block'
import ChatIcon from '@mui/icons-material/ChatOutlined'
import CheckCircleIcon from '@mui/icons-material/CheckCircleOutlineOutlined'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import DeleteIcon from '@mui/icons-material/DeleteOutlineOutlined'
import EditIcon from '@mui/icons-material/EditOutlined'
import VisibilityIcon from '@mui/icons-material/VisibilityOutlined'
import { type MouseEvent, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { RowAction, TimeCell } from '../../components/columns'
import { useNotify } from '../../components/Notify'
import { chatEntries } from '../../layout/nav'
import { formatTime, renderQuota } from '../../lib/format'
import { chatUrl, serverAddress } from '../chat/links'
import { revealKey } from './api'

export interface TokenRowProps {
  row: TokenView
  selected: boolean
  onSelect: () => void
  onViewKey: () => void
  onCopyKey: () => void
  onToggle: () => void
  onEdit: () => void
  onDelete: () => void
}

function StatusChip ({ status }: { status: number }) {
  const { t } = useTranslation()
  switch (status) {
    case TOKEN_STATUS.enabled: return <Chip size='small' color='success' label={t('token.status.enabled')} />
    case TOKEN_STATUS.disabled: return <Chip size='small' label={t('token.status.disabled')} />
    case TOKEN_STATUS.expired: return <Chip size='small' color='warning' label={t('token.status.expired')} />
    case TOKEN_STATUS.exhausted: return <Chip size='small' color='error' label={t('token.status.exhausted')} />
    default: return <Chip size='small' variant='outlined' label={t('token.status.unknown')} />
  }
}

/** One token in the list, with its actions. */
export function TokenRow ({ row, selected, onSelect, onViewKey, onCopyKey, onToggle, onEdit, onDelete }: TokenRowProps) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const [chatAnchor, setChatAnchor] = useState<HTMLElement | null>(null)
  const chats = chatEntries(status?.chats)

  /**
   * Opens a chat client with this token's key. The window is opened before the key is fetched:
   * a window opened after an await is no longer a direct answer to the click and gets blocked.
   */
  const openChat = (template: string) => {
    setChatAnchor(null)
    const win = window.open('about:blank', '_blank')
    revealKey(row.id).then((key) => {
      const url = chatUrl(template, key, serverAddress(status?.server_address))
      if (win === null) {
        window.location.href = url
        return
      }
      // The chat client must not be able to script the console through window.opener.
      win.opener = null
      win.location.href = url
    }, (err: unknown) => {
      win?.close()
      notify.error(err)
    })
  }

  const chat = (e: MouseEvent<HTMLElement>) => {
    if (chats.length === 0) {
      notify.error(t('token.noChatLinks'))
      return
    }
    if (chats.length === 1) {
      openChat(chats[0]!.url)
      return
    }
    setChatAnchor(e.currentTarget)
  }

  return (
    <TableRow hover selected={selected} data-testid={`token-row-${row.id}`}>
      <TableCell padding='checkbox'>
        <Checkbox checked={selected} onChange={onSelect} slotProps={{ input: { 'aria-label': t('token.selectRow', { name: row.name }) } }} />
      </TableCell>
      <TableCell sx={{ minWidth: 140, maxWidth: 260, overflowWrap: 'anywhere' }}>{row.name}</TableCell>
      <TableCell><StatusChip status={row.status} /></TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{row.unlimited_quota ? t('common.unlimited') : renderQuota(row.remain_quota, status)}</TableCell>
      <TimeCell seconds={row.created_time} />
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{row.expired_time === -1 ? t('common.never') : formatTime(row.expired_time)}</TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>
        <Stack direction='row' spacing={0.25}>
          <RowAction label={t('token.action.viewKey')} onClick={onViewKey}><VisibilityIcon fontSize='small' /></RowAction>
          <RowAction label={t('token.action.copyKey')} onClick={onCopyKey}><ContentCopyIcon fontSize='small' /></RowAction>
          <RowAction label={t('token.action.chat')} onClick={chat}><ChatIcon fontSize='small' /></RowAction>
          {row.status === TOKEN_STATUS.enabled
            ? <RowAction label={t('token.action.disable')} onClick={onToggle}><BlockIcon fontSize='small' /></RowAction>
            : <RowAction label={t('token.action.enable')} onClick={onToggle}><CheckCircleIcon fontSize='small' /></RowAction>}
          <RowAction label={t('token.action.edit')} onClick={onEdit}><EditIcon fontSize='small' /></RowAction>
          <RowAction label={t('token.action.delete')} onClick={onDelete} color='error'><DeleteIcon fontSize='small' /></RowAction>
        </Stack>
        <Menu anchorEl={chatAnchor} open={chatAnchor !== null} onClose={() => { setChatAnchor(null) }}>
          {chats.map((c, i) => <MenuItem key={`${i}-${c.name}`} onClick={() => { openChat(c.url) }}>{c.name}</MenuItem>)}
        </Menu>
      </TableCell>
    </TableRow>
  )
}
