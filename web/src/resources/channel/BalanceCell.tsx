import { BALANCE_CHANNEL_TYPES, type ChannelTagRow, type ChannelView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import CircularProgress from '@mui/material/CircularProgress'
import IconButton from '@mui/material/IconButton'
import Stack from '@mui/material/Stack'
import Tooltip from '@mui/material/Tooltip'
import RefreshIcon from '@mui/icons-material/Refresh'
import { useTranslation } from 'react-i18next'
import { formatTime } from '../../lib/format'

/** US dollars as `$1.23` (`-$1.23` when the account is overdrawn). */
export function formatUsd (usd: number): string {
  const text = `$${Math.abs(usd).toFixed(2)}`
  return usd < 0 && text !== '$0.00' ? `-${text}` : text
}

/** Whether the provider of channels of `type` reports a balance. */
export function hasBalance (type: number | null): boolean {
  return type !== null && BALANCE_CHANNEL_TYPES.includes(type)
}

export interface BalanceProps {
  channel: Pick<ChannelView, 'name' | 'type' | 'balance' | 'balance_updated_time'>
  updating: boolean
  onUpdate: () => void
}

/**
 * A channel's balance as last read from its provider (time on hover) with a button reading it
 * again; a dash when never read, and no button for types whose provider has no billing endpoint.
 */
export function Balance ({ channel, updating, onUpdate }: BalanceProps) {
  const { t } = useTranslation()
  if (!hasBalance(channel.type)) {
    return (
      <Tooltip title={t('channel.balance.unsupported')}>
        <Box component='span' tabIndex={0} data-testid='channel-balance' sx={{ color: 'text.secondary' }}>—</Box>
      </Tooltip>
    )
  }
  const read = channel.balance_updated_time > 0
  return (
    <Stack direction='row' spacing={0.25} sx={{ alignItems: 'center', whiteSpace: 'nowrap' }}>
      <Tooltip title={read ? t('channel.balance.updatedAt', { time: formatTime(channel.balance_updated_time) }) : t('channel.balance.never')}>
        <Box component='span' tabIndex={0} data-testid='channel-balance' sx={{ color: read ? undefined : 'text.secondary' }}>
          {read ? formatUsd(channel.balance) : '—'}
        </Box>
      </Tooltip>
      <Tooltip title={t('channel.balance.update')}>
        <span>
          <IconButton size='small' aria-label={t('channel.balance.updateOf', { name: channel.name })} onClick={onUpdate} disabled={updating}>
            {updating ? <CircularProgress size={16} /> : <RefreshIcon fontSize='small' />}
          </IconButton>
        </span>
      </Tooltip>
    </Stack>
  )
}

/** A tag row's balance: the sum over its children that have one read, else a dash. */
export function TagBalance ({ row }: { row: Pick<ChannelTagRow, 'balance' | 'children'> }) {
  const read = row.children.some((c) => hasBalance(c.type) && c.balance_updated_time > 0)
  return <Box component='span' sx={{ whiteSpace: 'nowrap', color: read ? undefined : 'text.secondary' }}>{read ? formatUsd(row.balance) : '—'}</Box>
}
