import Box from '@mui/material/Box'
import CircularProgress from '@mui/material/CircularProgress'
import IconButton from '@mui/material/IconButton'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import Link from '@mui/material/Link'
import { useTranslation } from 'react-i18next'
import { Link as RouterLink } from 'react-router-dom'
import { isRoot, useAuth } from '../../auth/AuthContext'
import { Html } from '../../components/Html'
import { priceEditorPath } from '../settings-admin/priceLink'

/** docs/domain.md: loading, incomplete while streaming, then complete or error. */
export type MessageState = 'loading' | 'incomplete' | 'complete' | 'error'

export interface Message {
  id: number
  role: 'user' | 'assistant'
  content: string
  state: MessageState
  /** Ended by the stop button. */
  stopped?: boolean
  /** Refused because this model has no price: the super admin gets a link to price it. */
  unpricedModel?: string
}

/** One chat bubble: the user's text, or the assistant's reply as sanitised Markdown. */
export function PlaygroundMessage ({ message, onCopy }: { message: Message, onCopy: (text: string) => void }) {
  const { t } = useTranslation()
  const { user } = useAuth()
  const mine = message.role === 'user'
  const caption = message.state === 'loading'
    ? t('playground.thinking')
    : message.state === 'incomplete'
      ? t('playground.streaming')
      : message.stopped === true
        ? t('playground.stopped')
        : message.state === 'error' ? t('playground.failed') : undefined
  return (
    <Stack
      data-testid='chat-message'
      data-role={message.role}
      data-state={message.state}
      sx={{ alignItems: mine ? 'flex-end' : 'flex-start', minWidth: 0 }}
    >
      <Typography variant='caption' color='text.secondary' sx={{ mb: 0.5 }}>
        {mine ? t('playground.you') : t('playground.assistant')}{caption === undefined ? '' : ` · ${caption}`}
      </Typography>
      <Paper
        variant='outlined'
        sx={{
          px: 1.5,
          py: 1,
          maxWidth: { xs: '100%', sm: '85%' },
          minWidth: 0,
          overflowWrap: 'anywhere',
          bgcolor: mine ? 'action.selected' : 'background.paper',
          borderColor: message.state === 'error' ? 'error.main' : undefined,
          color: message.state === 'error' ? 'error.main' : undefined
        }}
      >
        {message.state === 'loading'
          ? <CircularProgress size={18} aria-label={t('playground.thinking')} />
          : mine || message.state === 'error'
            ? <Box data-testid='message-text' sx={{ whiteSpace: 'pre-wrap' }}>{message.content}</Box>
            : <Html data-testid='message-text' html={message.content} markdown sx={{ '& > :first-of-type': { mt: 0 }, '& > :last-child': { mb: 0 }, '& pre': { overflowX: 'auto' } }} />}
      </Paper>
      {message.unpricedModel !== undefined && isRoot(user) && (
        <Link component={RouterLink} to={priceEditorPath(message.unpricedModel)} variant='body2' sx={{ mt: 0.5 }}>
          {t('playground.priceModel', { model: message.unpricedModel })}
        </Link>
      )}
      {!mine && message.state === 'complete' && message.content !== '' && (
        <IconButton size='small' aria-label={t('playground.copyReply')} onClick={() => { onCopy(message.content) }}>
          <ContentCopyIcon fontSize='inherit' />
        </IconButton>
      )}
    </Stack>
  )
}
