import Alert from '@mui/material/Alert'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import Snackbar from '@mui/material/Snackbar'
import TextField from '@mui/material/TextField'
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useLocation } from 'react-router-dom'

type Severity = 'success' | 'error' | 'info' | 'warning'
interface Toast { id: number, severity: Severity, text: string, at: number }

/** A toast younger than this stays across a page change: it reports what led there (signed in, created). */
const CARRIED_MS = 2000

export interface Notifier {
  success: (text: string) => void
  info: (text: string) => void
  warning: (text: string) => void
  /** Shows an error: an Error's message (ApiError messages are already translated) or a text. */
  error: (err: unknown) => void
  /** Copies to the clipboard; when the browser refuses, a dialog shows the text to copy by hand. */
  copy: (text: string, done?: string) => Promise<boolean>
}

const NotifyContext = createContext<Notifier | undefined>(undefined)
let nextId = 1

export function NotifyProvider ({ children }: { children: ReactNode }) {
  const { t } = useTranslation()
  // The newest message replaces the one showing: a queue would keep users waiting on stale news.
  const [current, setCurrent] = useState<Toast | undefined>()
  const [manualCopy, setManualCopy] = useState<string | undefined>()
  const push = useCallback((severity: Severity, text: string) => {
    if (text === '') return
    setCurrent({ id: nextId++, severity, text, at: Date.now() })
  }, [])
  const remove = (id: number) => { setCurrent((c) => c?.id === id ? undefined : c) }
  // News of the page left behind does not cover the next one.
  const { pathname } = useLocation()
  useEffect(() => { setCurrent((c) => c !== undefined && Date.now() - c.at > CARRIED_MS ? undefined : c) }, [pathname])
  const notifier = useMemo<Notifier>(() => ({
    success: (text) => { push('success', text) },
    info: (text) => { push('info', text) },
    warning: (text) => { push('warning', text) },
    error: (err) => { push('error', err instanceof Error ? err.message : String(err)) },
    copy: async (text, done) => {
      try {
        await navigator.clipboard.writeText(text)
        push('success', done ?? t('common.copied'))
        return true
      } catch {
        setManualCopy(text)
        return false
      }
    }
  }), [push, t])
  return (
    <NotifyContext.Provider value={notifier}>
      {children}
      <Snackbar
        key={current?.id}
        open={current !== undefined}
        autoHideDuration={current?.severity === 'error' ? 6000 : 3000}
        onClose={(_e, reason) => { if (reason !== 'clickaway' && current !== undefined) remove(current.id) }}
        // Bottom left: clear of the app bar, of drawers' titles and actions (right) and of dialogs' titles.
        anchorOrigin={{ vertical: 'bottom', horizontal: 'left' }}
      >
        {current === undefined
          ? undefined
          : <Alert role='alert' data-testid={`toast-${current.severity}`} severity={current.severity} variant='filled' onClose={() => { remove(current.id) }}>{current.text}</Alert>}
      </Snackbar>
      <Dialog open={manualCopy !== undefined} onClose={() => { setManualCopy(undefined) }} fullWidth>
        <DialogTitle>{t('common.copyFailed')}</DialogTitle>
        <DialogContent>
          <TextField value={manualCopy ?? ''} fullWidth multiline slotProps={{ htmlInput: { readOnly: true } }} onFocus={(e) => { e.target.select() }} autoFocus />
        </DialogContent>
        <DialogActions><Button onClick={() => { setManualCopy(undefined) }}>{t('common.close')}</Button></DialogActions>
      </Dialog>
    </NotifyContext.Provider>
  )
}

export function useNotify (): Notifier {
  const ctx = useContext(NotifyContext)
  if (ctx === undefined) throw new Error('useNotify outside NotifyProvider')
  return ctx
}
