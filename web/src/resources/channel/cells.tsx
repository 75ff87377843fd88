import { CHANNEL_STATUS, type ChannelView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Tooltip from '@mui/material/Tooltip'
import { type KeyboardEvent, useEffect, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { formatTime } from '../../lib/format'

/**
 * docs/domain.md: 0 is untested; up to 1 s green, up to 3 s lime, up to 5 s yellow, above red.
 * Fixed colours rather than theme roles: lime and yellow have no theme role.
 */
export function responseColour (ms: number): { bg: string, fg: string } | undefined {
  if (ms <= 0) return undefined
  if (ms <= 1000) return { bg: '#2e7d32', fg: '#fff' }
  if (ms <= 3000) return { bg: '#9acd32', fg: '#1b1b1b' }
  if (ms <= 5000) return { bg: '#fdd835', fg: '#1b1b1b' }
  return { bg: '#d32f2f', fg: '#fff' }
}

export function ResponseTime ({ ms }: { ms: number }) {
  const { t } = useTranslation()
  const colour = responseColour(ms)
  if (colour === undefined) return <Chip size='small' variant='outlined' label={t('channel.untested')} />
  return (
    <Chip
      size='small'
      data-testid='response-time'
      label={t('channel.seconds', { seconds: (ms / 1000).toFixed(2) })}
      sx={{ bgcolor: colour.bg, color: colour.fg }}
    />
  )
}

/** The status chip; a channel disabled by someone (the system or an admin) tells why and since when on hover. */
export function StatusChip ({ channel }: { channel: Pick<ChannelView, 'status' | 'other_info'> }) {
  const { t } = useTranslation()
  const { status, other_info: info } = channel
  const chip = status === CHANNEL_STATUS.enabled
    ? <Chip size='small' color='success' label={t('channel.status.enabled')} />
    : status === CHANNEL_STATUS.disabled
      ? <Chip size='small' label={t('channel.status.disabled')} />
      : status === CHANNEL_STATUS.autoDisabled
        ? <Chip size='small' color='warning' label={t('channel.status.autoDisabled')} />
        : <Chip size='small' variant='outlined' label={t('channel.status.unknown')} />
  if (status === CHANNEL_STATUS.enabled || (info.status_reason === undefined && info.status_time === undefined)) return chip
  const title = (
    <Box>
      {info.status_reason !== undefined && <div>{t('channel.status.reason', { reason: info.status_reason })}</div>}
      {info.status_time !== undefined && <div>{t('channel.status.time', { time: formatTime(info.status_time) })}</div>}
    </Box>
  )
  // The span takes the hover: a chip without onClick is not focusable, so keyboard users tab to it.
  return <Tooltip title={title}><Box component='span' tabIndex={0} sx={{ display: 'inline-flex' }}>{chip}</Box></Tooltip>
}

export function Groups ({ groups }: { groups: string }) {
  const names = groups.split(',').map((g) => g.trim()).filter((g) => g !== '')
  return (
    <Stack direction='row' spacing={0.5} useFlexGap sx={{ flexWrap: 'wrap', minWidth: 80 }}>
      {names.map((g) => <Chip key={g} size='small' variant='outlined' label={g} />)}
    </Stack>
  )
}

export interface InlineNumberProps {
  value: number | null
  label: string
  placeholder?: string
  min?: number
  /** Saves a value typed by the admin: the value stored, or null when refused (the field reverts). */
  onCommit: (text: string) => Promise<number | null>
}

/** A number edited in place: saved on Enter or when the field loses focus, reverted by Escape. */
export function InlineNumber ({ value, label, placeholder, min, onCommit }: InlineNumberProps) {
  const shown = value === null ? '' : String(value)
  const [text, setText] = useState(shown)
  const [busy, setBusy] = useState(false)
  // Whether the admin typed since the field last showed a stored value: a list reload arriving
  // while they type (after an earlier save, say) must not replace what they typed.
  const typed = useRef(false)
  useEffect(() => { if (!typed.current) setText(shown) }, [shown])

  const commit = async () => {
    if (busy || !typed.current) return
    if (text.trim() === shown) {
      typed.current = false
      return
    }
    setBusy(true)
    try {
      const stored = await onCommit(text)
      setText(stored === null ? shown : String(stored))
    } finally {
      typed.current = false
      setBusy(false)
    }
  }
  const key = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'Enter') {
      e.preventDefault()
      void commit()
    } else if (e.key === 'Escape') {
      typed.current = false
      setText(shown)
    }
  }
  return (
    <TextField
      size='small'
      type='number'
      value={text}
      placeholder={placeholder}
      disabled={busy}
      onChange={(e) => { typed.current = true; setText(e.target.value) }}
      onBlur={() => { void commit() }}
      onKeyDown={key}
      sx={{ width: 80 }}
      slotProps={{ htmlInput: { 'aria-label': label, step: 1, min } }}
    />
  )
}
