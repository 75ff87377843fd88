import type { VerifyMethod } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import CircularProgress from '@mui/material/CircularProgress'
import Dialog from '@mui/material/Dialog'
import Divider from '@mui/material/Divider'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogContentText from '@mui/material/DialogContentText'
import DialogTitle from '@mui/material/DialogTitle'
import Tab from '@mui/material/Tab'
import Tabs from '@mui/material/Tabs'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import KeyIcon from '@mui/icons-material/KeyOutlined'
import { createContext, type FormEvent, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { isVerificationRequired } from '../api/client'
import { passkeysSupported, verifyWithPasskey } from '../resources/passkey/ceremony'
import { verifySession, verifyStatus } from '../resources/two-factor/api'

export interface VerifyDialogProps {
  open: boolean
  /** Closed without verifying. */
  onClose: () => void
  /** The session is verified (for five minutes). */
  onVerified: () => void
}

/**
 * Secure verification: the user confirms the password, a 2FA code (TOTP or backup code) or a passkey, and
 * the session may then do sensitive things for five minutes (POST /api/verify). Offers the
 * methods GET /api/verify/status lists for the account.
 */
export function VerifyDialog ({ open, onClose, onVerified }: VerifyDialogProps) {
  const { t } = useTranslation()
  const [methods, setMethods] = useState<VerifyMethod[] | undefined>()
  const [method, setMethod] = useState<VerifyMethod>('password')
  const [value, setValue] = useState('')
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  // The account has a passkey (and this browser can use it): offered above the other methods.
  const [passkey, setPasskey] = useState(false)

  useEffect(() => {
    if (!open) return
    let live = true
    setMethods(undefined)
    setPasskey(false)
    setValue('')
    setError(undefined)
    verifyStatus().then((s) => {
      if (!live) return
      const usable = s.methods.filter((m): m is VerifyMethod => m === 'password' || m === '2fa')
      setMethods(usable)
      setPasskey(s.methods.includes('passkey') && passkeysSupported())
      // The password first: a 2FA code used here cannot be used again in the same 30 seconds.
      setMethod(usable.includes('password') ? 'password' : usable[0] ?? 'password')
    }, (err: unknown) => { if (live) { setMethods([]); setError(err instanceof Error ? err.message : String(err)) } })
    return () => { live = false }
  }, [open])

  const verifyByPasskey = () => {
    setBusy(true)
    setError(undefined)
    verifyWithPasskey().then(() => {
      setBusy(false)
      onVerified()
    }, (err: unknown) => {
      setBusy(false)
      setError(err instanceof Error ? err.message : String(err))
    })
  }

  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (value.trim() === '') {
      setError(t(method === 'password' ? 'twoFactor.verify.passwordLabel' : 'twoFactor.code.required'))
      return
    }
    setBusy(true)
    setError(undefined)
    verifySession(method, method === 'password' ? value : value.trim()).then(() => {
      setBusy(false)
      onVerified()
    }, (err: unknown) => {
      setBusy(false)
      setError(err instanceof Error ? err.message : String(err))
    })
  }

  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth='xs' aria-labelledby='verify-title' data-testid='verify-dialog'>
      <Box component='form' onSubmit={submit} noValidate>
        <DialogTitle id='verify-title'>{t('twoFactor.verify.title')}</DialogTitle>
        <DialogContent>
          <DialogContentText sx={{ mb: 2 }}>{t('twoFactor.verify.help')}</DialogContentText>
          {methods === undefined && <CircularProgress size={24} />}
          {methods !== undefined && methods.length === 0 && !passkey && error === undefined && <Alert severity='warning'>{t('twoFactor.verify.none')}</Alert>}
          {passkey && (
            <>
              <Button fullWidth variant='outlined' size='large' startIcon={<KeyIcon />} disabled={busy} onClick={verifyByPasskey} data-testid='verify-passkey'>{t('passkey.verify.button')}</Button>
              {methods !== undefined && methods.length > 0 && <Divider sx={{ my: 2 }}><Typography variant='body2' color='text.secondary'>{t('passkey.verify.or')}</Typography></Divider>}
            </>
          )}
          {methods !== undefined && methods.length > 1 && (
            <Tabs value={method} onChange={(_e, m: VerifyMethod) => { setMethod(m); setValue(''); setError(undefined) }} sx={{ mb: 2 }} variant='fullWidth'>
              <Tab value='password' label={t('twoFactor.verify.password')} />
              <Tab value='2fa' label={t('twoFactor.verify.totp')} />
            </Tabs>
          )}
          {methods !== undefined && methods.length > 0 && (
            method === 'password'
              ? (
                <TextField
                  key='password' label={t('twoFactor.verify.passwordLabel')} type='password' value={value} autoFocus fullWidth
                  onChange={(e) => { setValue(e.target.value) }}
                  slotProps={{ htmlInput: { autoComplete: 'current-password', maxLength: 128, 'data-testid': 'verify-password' } }}
                />
                )
              : (
                <TextField
                  key='code' label={t('twoFactor.code.either')} value={value} autoFocus fullWidth
                  onChange={(e) => { setValue(e.target.value) }}
                  helperText={t('twoFactor.code.totpHelp')}
                  slotProps={{ htmlInput: { autoComplete: 'one-time-code', maxLength: 64, 'data-testid': 'verify-code' } }}
                />
                )
          )}
          {error !== undefined && <Alert severity='error' role='alert' sx={{ mt: 2 }} data-testid='verify-error'>{error}</Alert>}
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          {!(passkey && methods?.length === 0) && <Button type='submit' variant='contained' disabled={busy || methods === undefined || methods.length === 0}>{t('twoFactor.verify.submit')}</Button>}
        </DialogActions>
      </Box>
    </Dialog>
  )
}

export interface Verification {
  /** Opens the verification dialog; true once the session is verified, false when the user closed it. */
  requestVerification: () => Promise<boolean>
  /**
   * Runs `action`; when the server answers that it needs a fresh verification
   * (`data.require_verification`), asks for one and runs it once more. When the user closes the
   * dialog, the server's refusal is thrown as it came.
   */
  withVerification: <T>(action: () => Promise<T>) => Promise<T>
}

const VerificationContext = createContext<Verification | undefined>(undefined)

/** Provides {@link useVerification} and renders its one dialog (mounted once by the shell). */
export function VerificationProvider ({ children }: { children: ReactNode }) {
  const [open, setOpen] = useState(false)
  const waiting = useRef<Array<(ok: boolean) => void>>([])
  const settle = (ok: boolean) => {
    setOpen(false)
    const resolvers = waiting.current
    waiting.current = []
    for (const resolve of resolvers) resolve(ok)
  }
  const requestVerification = useCallback(async () => await new Promise<boolean>((resolve) => {
    waiting.current.push(resolve)
    setOpen(true)
  }), [])
  const withVerification = useCallback(async <T,>(action: () => Promise<T>): Promise<T> => {
    try {
      return await action()
    } catch (err) {
      if (!isVerificationRequired(err) || !await requestVerification()) throw err
      return await action()
    }
  }, [requestVerification])
  const value = useMemo(() => ({ requestVerification, withVerification }), [requestVerification, withVerification])
  return (
    <VerificationContext.Provider value={value}>
      {children}
      <VerifyDialog open={open} onClose={() => { settle(false) }} onVerified={() => { settle(true) }} />
    </VerificationContext.Provider>
  )
}

/** Secure verification for any screen: wrap a sensitive call in `withVerification`. */
export function useVerification (): Verification {
  const ctx = useContext(VerificationContext)
  if (ctx === undefined) throw new Error('useVerification outside VerificationProvider')
  return ctx
}
