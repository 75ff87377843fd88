import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import GitHubIcon from '@mui/icons-material/GitHub'
import KeyIcon from '@mui/icons-material/Key'
import QrCodeIcon from '@mui/icons-material/QrCode'
import type { SecondStepRequired, StatusData, UserView } from '@modelgate/contracts'
import { type FormEvent, useEffect, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { CustomOAuthLoginButtons } from '../custom-oauth/LoginButtons'
import { githubAuthorizeUrl, linuxdoAuthorizeUrl, oauthState, type TelegramAuth, telegramLogin, wechatLogin } from './api'

declare global {
  interface Window { onTelegramAuth?: (user: TelegramAuth) => void }
}

const TELEGRAM_WIDGET = 'https://telegram.org/js/telegram-widget.js?22'

/** True when /api/status enables at least one sign-in method other than the password. */
export function hasOAuth (status: StatusData | undefined): boolean {
  return status?.github_oauth === true || status?.linuxdo_oauth === true || status?.wechat_login === true || status?.telegram_oauth === true ||
    (status?.custom_oauth_providers ?? []).length > 0
}

/** Telegram's own login button: its script draws the button where the script tag stands. */
function TelegramWidget ({ botName, onAuth }: { botName: string, onAuth: (user: TelegramAuth) => void }) {
  const box = useRef<HTMLDivElement>(null)
  const callback = useRef(onAuth)
  callback.current = onAuth
  useEffect(() => {
    const el = box.current
    if (el === null) return
    window.onTelegramAuth = (user) => { callback.current(user) }
    const script = document.createElement('script')
    script.src = TELEGRAM_WIDGET
    script.async = true
    script.setAttribute('data-telegram-login', botName)
    script.setAttribute('data-size', 'large')
    script.setAttribute('data-request-access', 'write')
    script.setAttribute('data-onauth', 'onTelegramAuth(user)')
    el.appendChild(script)
    return () => {
      el.replaceChildren()
      delete window.onTelegramAuth
    }
  }, [botName])
  return <Box ref={box} data-testid='telegram-login' sx={{ display: 'flex', justifyContent: 'center', maxWidth: '100%', overflow: 'hidden' }} />
}

/** WeChat: the official account's QR code and the code it replies with. */
function WeChatDialog ({ open, qrcode, onClose, onSignedIn }: { open: boolean, qrcode: string, onClose: () => void, onSignedIn: (user: UserView | SecondStepRequired) => void }) {
  const { t } = useTranslation()
  const notify = useNotify()
  const [code, setCode] = useState('')
  const [busy, setBusy] = useState(false)
  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (code.trim() === '') {
      notify.error(t('auth.oauth.wechatEnterCode'))
      return
    }
    setBusy(true)
    wechatLogin(code.trim()).then((user) => {
      onClose()
      onSignedIn(user)
    }, (err: unknown) => { notify.error(err) }).finally(() => { setBusy(false) })
  }
  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth='xs'>
      <Box component='form' onSubmit={submit} noValidate>
        <DialogTitle>{t('auth.oauth.wechatTitle')}</DialogTitle>
        <DialogContent>
          {qrcode !== '' && (
            <Box component='img' src={qrcode} alt={t('auth.oauth.wechatQr')} sx={{ display: 'block', mx: 'auto', mb: 2, width: 200, maxWidth: '100%' }} />
          )}
          <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>{t('auth.oauth.wechatHint')}</Typography>
          <TextField label={t('auth.oauth.wechatCode')} value={code} onChange={(e) => { setCode(e.target.value) }} fullWidth autoFocus autoComplete='one-time-code' />
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type='submit' variant='contained' disabled={busy}>{t('auth.login.submit')}</Button>
        </DialogActions>
      </Box>
    </Dialog>
  )
}

/**
 * The sign-in methods /api/status enables besides the password: GitHub and LinuxDO (through a
 * single-use state, then the provider's authorize page), WeChat (QR code and code) and Telegram.
 */
export function OAuthButtons ({ onSignedIn }: { onSignedIn: (answer: UserView | SecondStepRequired) => void }) {
  const { t, i18n } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const [busy, setBusy] = useState(false)
  const [wechatOpen, setWechatOpen] = useState(false)
  if (status === undefined || !hasOAuth(status)) return null

  const redirect = (authorizeUrl: (state: string) => string) => {
    setBusy(true)
    oauthState().then((state) => { window.location.href = authorizeUrl(state) }, (err: unknown) => {
      notify.error(err)
      setBusy(false)
    })
  }
  const onTelegram = (fields: TelegramAuth) => {
    telegramLogin(fields, i18n.language).then(onSignedIn, (err: unknown) => { notify.error(err) })
  }
  return (
    <Stack spacing={1.5} sx={{ mt: 2 }}>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ justifyContent: 'center' }}>
        {status.github_oauth && (
          <Button variant='outlined' startIcon={<GitHubIcon />} disabled={busy} onClick={() => { redirect((s) => githubAuthorizeUrl(status.github_client_id, s)) }}>
            {t('auth.oauth.github')}
          </Button>
        )}
        {status.linuxdo_oauth && (
          <Button variant='outlined' startIcon={<KeyIcon />} disabled={busy} onClick={() => { redirect((s) => linuxdoAuthorizeUrl(status.linuxdo_client_id, s, status.server_address)) }}>
            {t('auth.oauth.linuxdo')}
          </Button>
        )}
        {status.wechat_login && (
          <Button variant='outlined' startIcon={<QrCodeIcon />} onClick={() => { setWechatOpen(true) }}>
            {t('auth.oauth.wechat')}
          </Button>
        )}
        <CustomOAuthLoginButtons providers={status.custom_oauth_providers ?? []} />
      </Stack>
      {status.telegram_oauth && status.telegram_bot_name !== '' && (
        <Box aria-label={t('auth.oauth.telegram')}>
          <TelegramWidget botName={status.telegram_bot_name} onAuth={onTelegram} />
        </Box>
      )}
      {status.wechat_login && (
        <WeChatDialog open={wechatOpen} qrcode={status.wechat_qrcode} onClose={() => { setWechatOpen(false) }} onSignedIn={onSignedIn} />
      )}
    </Stack>
  )
}
