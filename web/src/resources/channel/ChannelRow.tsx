import Box from '@mui/material/Box'
import { CHANNEL_STATUS, type ChannelTagRow, type ChannelView } from '@modelgate/contracts'
import Button from '@mui/material/Button'
import ButtonGroup from '@mui/material/ButtonGroup'
import Chip from '@mui/material/Chip'
import CircularProgress from '@mui/material/CircularProgress'
import IconButton from '@mui/material/IconButton'
import Menu from '@mui/material/Menu'
import MenuItem from '@mui/material/MenuItem'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import Typography from '@mui/material/Typography'
import ArrowDropDownIcon from '@mui/icons-material/ArrowDropDown'
import BlockIcon from '@mui/icons-material/Block'
import CheckCircleIcon from '@mui/icons-material/CheckCircleOutlineOutlined'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import DeleteIcon from '@mui/icons-material/DeleteOutlineOutlined'
import EditIcon from '@mui/icons-material/EditOutlined'
import ExpandMoreIcon from '@mui/icons-material/ExpandMore'
import KeyboardArrowRightIcon from '@mui/icons-material/KeyboardArrowRight'
import KeyIcon from '@mui/icons-material/KeyOutlined'
import LocalOfferIcon from '@mui/icons-material/LocalOfferOutlined'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { RowAction, type RowActionProps } from '../../components/columns'
import { Balance, TagBalance } from './BalanceCell'
import { Groups, InlineNumber, ResponseTime, StatusChip } from './cells'
import { splitNames } from './form'

const Action = (props: Omit<RowActionProps, 'wrapped'>) => <RowAction {...props} wrapped />

export interface ChannelRowProps {
  row: ChannelView
  typeName: string
  /** A child under an expanded tag row: indented. */
  nested?: boolean
  testing: boolean
  onTest: (model?: string) => void
  onToggle: () => void
  onEdit: () => void
  onCopy: () => void
  onDelete: () => void
  onPriority: (text: string) => Promise<number | null>
  onWeight: (text: string) => Promise<number | null>
  /** Opens the per-key dialog; offered for channels with more than one key. */
  onKeys: () => void
  /** A balance read from the provider is under way. */
  updatingBalance: boolean
  onBalance: () => void
}

/** One channel of the list with its inline edits and actions. */
export function ChannelRow ({ row, typeName, nested = false, testing, onTest, onToggle, onEdit, onCopy, onDelete, onPriority, onWeight, onKeys, updatingBalance, onBalance }: ChannelRowProps) {
  const { t } = useTranslation()
  const [menu, setMenu] = useState<HTMLElement | null>(null)
  const models = splitNames(row.models)
  const pick = (model: string) => {
    setMenu(null)
    onTest(model)
  }
  return (
    <TableRow hover data-testid={`channel-row-${row.id}`} sx={nested ? { bgcolor: 'action.hover' } : undefined}>
      <TableCell sx={{ pl: nested ? 5 : undefined, whiteSpace: 'nowrap' }}>{row.id}</TableCell>
      <TableCell sx={{ minWidth: 120, maxWidth: 240 }}>
        <Stack spacing={0.5} sx={{ alignItems: 'flex-start', minWidth: 0 }}>
          {/* One line: a long name ends in an ellipsis, told in full on hover. */}
          <Box component='span' title={row.name} sx={{ display: 'block', maxWidth: '100%', overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }}>{row.name}</Box>
          {row.tag !== null && row.tag !== '' && !nested && <Chip size='small' variant='outlined' icon={<LocalOfferIcon />} label={row.tag} />}
        </Stack>
      </TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{typeName}</TableCell>
      <TableCell><StatusChip channel={row} /></TableCell>
      <TableCell><Groups groups={row.group} /></TableCell>
      <TableCell><ResponseTime ms={row.response_time} /></TableCell>
      <TableCell><Balance channel={row} updating={updatingBalance} onUpdate={onBalance} /></TableCell>
      <TableCell>
        <InlineNumber value={row.priority} min={-999} label={t('channel.inlinePriority', { name: row.name })} onCommit={onPriority} />
      </TableCell>
      <TableCell>
        <InlineNumber value={row.weight} min={0} label={t('channel.inlineWeight', { name: row.name })} onCommit={onWeight} />
      </TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>
        <Stack direction='row' spacing={0.25} sx={{ alignItems: 'center' }}>
          <ButtonGroup size='small' variant='outlined' disabled={testing}>
            <Button onClick={() => { onTest() }} startIcon={testing ? <CircularProgress size={14} /> : undefined}>{t('channel.action.test')}</Button>
            <Button aria-label={t('channel.action.testModel')} aria-haspopup='menu' onClick={(e) => { setMenu(e.currentTarget) }} sx={{ px: 0.5, minWidth: 0 }}>
              <ArrowDropDownIcon fontSize='small' />
            </Button>
          </ButtonGroup>
          {row.status === CHANNEL_STATUS.enabled
            ? <Action label={t('channel.action.disable')} onClick={onToggle}><BlockIcon fontSize='small' /></Action>
            : <Action label={t('channel.action.enable')} onClick={onToggle}><CheckCircleIcon fontSize='small' /></Action>}
          {row.key_count > 1 && <Action label={t('channel.action.keys')} onClick={onKeys}><KeyIcon fontSize='small' /></Action>}
          <Action label={t('channel.action.edit')} onClick={onEdit}><EditIcon fontSize='small' /></Action>
          <Action label={t('channel.action.copy')} onClick={onCopy}><ContentCopyIcon fontSize='small' /></Action>
          <Action label={t('channel.action.delete')} onClick={onDelete} color='error'><DeleteIcon fontSize='small' /></Action>
        </Stack>
        <Menu anchorEl={menu} open={menu !== null} onClose={() => { setMenu(null) }}>
          {models.map((m) => <MenuItem key={m} onClick={() => { pick(m) }}>{m}</MenuItem>)}
        </Menu>
      </TableCell>
    </TableRow>
  )
}

export interface TagRowProps {
  row: ChannelTagRow
  typeName: string
  expanded: boolean
  onExpand: () => void
  onEnableAll: () => void
  onDisableAll: () => void
  onEditTag: () => void
  onPriority: (text: string) => Promise<number | null>
  onWeight: (text: string) => Promise<number | null>
}

/** A tag in tag mode: the parent of the channels sharing it, with bulk actions. */
export function TagRow ({ row, typeName, expanded, onExpand, onEnableAll, onDisableAll, onEditTag, onPriority, onWeight }: TagRowProps) {
  const { t } = useTranslation()
  const total = row.children.length
  const status = row.status === 0
    ? <Chip size='small' color={row.enabled_count > 0 ? 'info' : 'default'} label={t('channel.status.tagEnabled', { enabled: row.enabled_count, total })} />
    : <StatusChip channel={{ status: row.status, other_info: {} }} />
  return (
    <TableRow hover data-testid={`tag-row-${row.tag}`}>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>
        <IconButton
          size='small'
          aria-expanded={expanded}
          aria-label={expanded ? t('channel.action.collapse', { tag: row.tag }) : t('channel.action.expand', { tag: row.tag })}
          onClick={onExpand}
        >
          {expanded ? <ExpandMoreIcon fontSize='small' /> : <KeyboardArrowRightIcon fontSize='small' />}
        </IconButton>
      </TableCell>
      <TableCell sx={{ minWidth: 120, maxWidth: 240, overflowWrap: 'anywhere' }}>
        <Stack spacing={0.5} sx={{ alignItems: 'flex-start' }}>
          <Chip size='small' color='primary' icon={<LocalOfferIcon />} label={row.tag} />
          <Typography variant='caption' color='text.secondary'>{t('channel.tagChannels', { count: total })}</Typography>
        </Stack>
      </TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{typeName}</TableCell>
      <TableCell>{status}</TableCell>
      <TableCell><Groups groups={row.group} /></TableCell>
      <TableCell />
      <TableCell><TagBalance row={row} /></TableCell>
      <TableCell>
        <InlineNumber value={row.priority} min={-999} placeholder={t('channel.mixed')} label={t('channel.inlinePriority', { name: row.tag })} onCommit={onPriority} />
      </TableCell>
      <TableCell>
        <InlineNumber value={row.weight} min={0} placeholder={t('channel.mixed')} label={t('channel.inlineWeight', { name: row.tag })} onCommit={onWeight} />
      </TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>
        <Stack direction='row' spacing={0.25}>
          <Action label={t('channel.action.enableAll')} onClick={onEnableAll}><CheckCircleIcon fontSize='small' color='success' /></Action>
          <Action label={t('channel.action.disableAll')} onClick={onDisableAll}><BlockIcon fontSize='small' /></Action>
          <Action label={t('channel.action.editTag')} onClick={onEditTag}><EditIcon fontSize='small' /></Action>
        </Stack>
      </TableCell>
    </TableRow>
  )
}
