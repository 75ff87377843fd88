import Accordion from '@mui/material/Accordion'
import AccordionDetails from '@mui/material/AccordionDetails'
import AccordionSummary from '@mui/material/AccordionSummary'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import useMediaQuery from '@mui/material/useMediaQuery'
import { useTheme } from '@mui/material/styles'
import DeleteSweepIcon from '@mui/icons-material/DeleteSweepOutlined'
import ExpandMoreIcon from '@mui/icons-material/ExpandMore'
import SendIcon from '@mui/icons-material/Send'
import StopIcon from '@mui/icons-material/Stop'
import { type KeyboardEvent, useEffect, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { PlaygroundMessage, type Message } from './PlaygroundMessage'
import { PlaygroundPanel } from './PlaygroundPanel'
import { PlaygroundError, streamChat, type ChatTurn } from './stream'
import { usePlaygroundOptions, usePlaygroundSettings } from './usePlayground'

let nextId = 1

/** The chat playground: a settings panel (beside the chat, or folded above it on small screens) and a streaming chat. */
export default function PlaygroundPage () {
  const { t } = useTranslation()
  const theme = useTheme()
  const small = useMediaQuery(theme.breakpoints.down('md'))
  const { refresh } = useAuth()
  const notify = useNotify()
  const options = usePlaygroundOptions()
  const [settings, setSettings] = usePlaygroundSettings(options)
  const [messages, setMessages] = useState<Message[]>([])
  const [input, setInput] = useState('')
  const [busy, setBusy] = useState(false)
  const abort = useRef<AbortController | null>(null)
  const list = useRef<HTMLDivElement>(null)
  const noModels = options.models !== undefined && options.models.length === 0

  useEffect(() => {
    const el = list.current
    if (el !== null) el.scrollTop = el.scrollHeight
  }, [messages])
  // Leaving the page ends a reply still streaming.
  useEffect(() => () => { abort.current?.abort() }, [])

  const update = (id: number, change: (m: Message) => Message) => {
    setMessages((all) => all.map((m) => (m.id === id ? change(m) : m)))
  }

  const send = async () => {
    const text = input.trim()
    if (text === '' || busy || settings.model === '') return
    // Earlier turns that failed are shown but not sent back to the model.
    const history: ChatTurn[] = messages.filter((m) => m.state === 'complete' && m.content !== '').map((m) => ({ role: m.role, content: m.content }))
    const turns: ChatTurn[] = [
      ...(settings.systemPrompt.trim() !== '' ? [{ role: 'system' as const, content: settings.systemPrompt }] : []),
      ...history,
      { role: 'user', content: text }
    ]
    const question: Message = { id: nextId++, role: 'user', content: text, state: 'complete' }
    const reply: Message = { id: nextId++, role: 'assistant', content: '', state: 'loading' }
    setMessages((all) => [...all, question, reply])
    setInput('')
    setBusy(true)
    const controller = new AbortController()
    abort.current = controller
    try {
      await streamChat(
        { messages: turns, model: settings.model, group: settings.group, temperature: settings.temperature, max_tokens: settings.maxTokens },
        controller.signal,
        (delta) => { update(reply.id, (m) => ({ ...m, content: m.content + delta, state: 'incomplete' })) }
      )
      update(reply.id, (m) => ({ ...m, state: 'complete' }))
    } catch (err) {
      if (controller.signal.aborted) {
        update(reply.id, (m) => ({ ...m, state: m.content === '' ? 'error' : 'complete', stopped: true }))
      } else if (err instanceof PlaygroundError && err.kind === 'stream') {
        // A stream error appends the error data to the reply.
        update(reply.id, (m) => ({ ...m, content: m.content === '' ? err.message : `${m.content}\n\n${err.message}`, state: 'error' }))
      } else {
        const unpricedModel = err instanceof PlaygroundError && err.code === 'model_not_priced' ? settings.model : undefined
        update(reply.id, (m) => ({ ...m, content: err instanceof Error ? err.message : String(err), state: 'error', unpricedModel }))
        // A 401 here means the session is gone; the console API call lets the shell send the user to /login.
        if (err instanceof PlaygroundError && err.status === 401) refresh().catch(() => {})
      }
    } finally {
      abort.current = null
      setBusy(false)
    }
  }

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault()
      void send()
    }
  }

  const panel = <PlaygroundPanel options={options} settings={settings} onChange={setSettings} />
  return (
    <Stack direction={{ xs: 'column', md: 'row' }} sx={{ gap: 2, minWidth: 0, alignItems: 'stretch' }}>
      {small
        ? (
          <Accordion disableGutters defaultExpanded={false} sx={{ minWidth: 0 }}>
            <AccordionSummary expandIcon={<ExpandMoreIcon />} aria-controls='playground-settings' id='playground-settings-header'>
              <Typography sx={{ minWidth: 0, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }}>
                {t('playground.settings')}{settings.model !== '' ? ` · ${settings.model}` : ''}
              </Typography>
            </AccordionSummary>
            <AccordionDetails id='playground-settings'>{panel}</AccordionDetails>
          </Accordion>
          )
        : <Paper sx={{ p: 2, width: 300, flexShrink: 0, alignSelf: 'flex-start' }} component='aside' aria-label={t('playground.settings')}>{panel}</Paper>}
      <Paper sx={{ flex: { xs: 'none', md: 1 }, minWidth: 0, display: 'flex', flexDirection: 'column', height: { xs: 'calc(100vh - 200px)', md: 'calc(100vh - 170px)' }, minHeight: 360 }}>
        <Stack direction='row' sx={{ alignItems: 'center', justifyContent: 'space-between', px: 2, py: 1, borderBottom: 1, borderColor: 'divider' }}>
          <Typography variant='h6' component='h1'>{t('playground.title')}</Typography>
          <Button size='small' startIcon={<DeleteSweepIcon />} disabled={busy || messages.length === 0} onClick={() => { setMessages([]) }}>
            {t('playground.clear')}
          </Button>
        </Stack>
        <Box ref={list} data-testid='chat-messages' sx={{ flex: 1, overflowY: 'auto', overflowX: 'hidden', p: 2, display: 'flex', flexDirection: 'column', gap: 2 }}>
          {options.failed && <Alert severity='error'>{t('playground.loadFailed')}</Alert>}
          {noModels && <Alert severity='warning' data-testid='no-models'>{t('playground.noModels')}</Alert>}
          {messages.length === 0 && !noModels && (
            <Typography color='text.secondary' sx={{ m: 'auto', textAlign: 'center' }}>{t('playground.empty')}</Typography>
          )}
          {messages.map((m) => <PlaygroundMessage key={m.id} message={m} onCopy={(text) => { void notify.copy(text) }} />)}
        </Box>
        <Stack direction='row' sx={{ gap: 1, p: 1.5, borderTop: 1, borderColor: 'divider', alignItems: 'flex-end' }}>
          <TextField
            label={t('playground.input')}
            placeholder={t('playground.inputPlaceholder')}
            value={input}
            onChange={(e) => { setInput(e.target.value) }}
            onKeyDown={onKeyDown}
            multiline
            maxRows={6}
            fullWidth
            size='small'
            disabled={noModels}
          />
          {busy
            ? <Button variant='outlined' color='error' startIcon={<StopIcon />} onClick={() => { abort.current?.abort() }} sx={{ flexShrink: 0 }}>{t('playground.stop')}</Button>
            : (
              <Button variant='contained' endIcon={<SendIcon />} onClick={() => { void send() }} disabled={input.trim() === '' || settings.model === ''} sx={{ flexShrink: 0 }}>
                {t('playground.send')}
              </Button>
              )}
        </Stack>
      </Paper>
    </Stack>
  )
}
