import type { UserView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import Divider from '@mui/material/Divider'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import useMediaQuery from '@mui/material/useMediaQuery'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { requestEnvelope } from '../../api/client'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { useVerification } from '../../components/VerifyDialog'
import { useAction } from '../../lib/useAction'
import { CustomOAuthBindingRows } from '../custom-oauth/PersonalBindings'
import { PersonalCard } from './PersonalCard'
import { authorizeUrl, PersonalTelegramWidget, PersonalTurnstile, type TelegramAnswer } from './PersonalWidgets'

/** Seconds before another code may be mailed (docs/domain.md). */
const RESEND_COOLDOWN_S = 30

type Dialogs = 'email' | 'wechat' | 'telegram' | undefined

/** Current bindings, and binding email, GitHub, LinuxDO, WeChat and Telegram (each when enabled). */
export function PersonalBindings ({ self, onChange }: { self: UserView, onChange: (user: UserView) => void }) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const [dialog, setDialog] = useState<Dialogs>()
  const [redirecting, setRedirecting] = useState(false)

  const oauth = async (provider: 'github' | 'linuxdo') => {
    if (status === undefined) return
    setRedirecting(true)
    try {
      const clientId = provider === 'github' ? status.github_client_id : status.linuxdo_client_id
      notify.info(t('setting.personal.bind.redirecting', { provider: provider === 'github' ? 'GitHub' : 'LinuxDO' }))
      window.location.href = await authorizeUrl(provider, clientId, status.server_address)
    } catch (err) {
      notify.error(err)
      setRedirecting(false)
    }
  }
  const bound = (user: UserView | undefined, message: string) => {
    if (user !== undefined) onChange(user)
    notify.success(message)
    setDialog(undefined)
  }

  const rows: Array<{ key: string, label: string, value: string, action: () => void }> = [
    { key: 'email', label: t('setting.personal.bind.email'), value: self.email, action: () => { setDialog('email') } }
  ]
  if (status?.github_oauth === true) rows.push({ key: 'github', label: t('setting.personal.bind.github'), value: self.github_id, action: () => { void oauth('github') } })
  if (status?.linuxdo_oauth === true) rows.push({ key: 'linuxdo', label: t('setting.personal.bind.linuxdo'), value: self.linuxdo_id, action: () => { void oauth('linuxdo') } })
  if (status?.wechat_login === true) rows.push({ key: 'wechat', label: t('setting.personal.bind.wechat'), value: self.wechat_id, action: () => { setDialog('wechat') } })
  if (status?.telegram_oauth === true) rows.push({ key: 'telegram', label: t('setting.personal.bind.telegram'), value: self.telegram_id, action: () => { setDialog('telegram') } })

  return (
    <PersonalCard title={t('setting.personal.bind.title')} testId='personal-bindings'>
      <Stack divider={<Divider flexItem />} sx={{ gap: 1 }}>
        {rows.map((row) => (
          <Stack key={row.key} direction='row' data-testid={`binding-${row.key}`} sx={{ alignItems: 'center', gap: 1 }}>
            <Box sx={{ minWidth: 0, flex: 1 }}>
              <Typography variant='body2' color='text.secondary'>{row.label}</Typography>
              <Typography sx={{ overflowWrap: 'anywhere' }} color={row.value === '' ? 'text.disabled' : undefined}>
                {row.value === '' ? t('setting.personal.bind.notBound') : row.value}
              </Typography>
            </Box>
            {/* A bound provider account stays bound: only the email can be changed. */}
            {(row.value === '' || row.key === 'email') && (
              <Button size='small' variant='outlined' onClick={row.action} disabled={redirecting}>
                {row.value === '' ? t('setting.personal.bind.bind') : t('setting.personal.bind.rebind')}
              </Button>
            )}
          </Stack>
        ))}
      </Stack>
      <CustomOAuthBindingRows />
      {dialog === 'email' && <EmailDialog onClose={() => { setDialog(undefined) }} onBound={bound} />}
      {dialog === 'wechat' && <WeChatDialog onClose={() => { setDialog(undefined) }} onBound={bound} />}
      {dialog === 'telegram' && <TelegramDialog onClose={() => { setDialog(undefined) }} onBound={bound} />}
    </PersonalCard>
  )
}

interface DialogProps { onClose: () => void, onBound: (user: UserView | undefined, message: string) => void }

function EmailDialog ({ onClose, onBound }: DialogProps) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const { withVerification } = useVerification()
  const small = useMediaQuery('(max-width:600px)')
  const [email, setEmail] = useState('')
  const [code, setCode] = useState('')
  const [turnstile, setTurnstile] = useState('')
  const [cooldown, setCooldown] = useState(0)
  const [sending, setSending] = useState(false)
  const [binding, setBinding] = useState(false)
  const needsTurnstile = status?.turnstile_check === true

  useEffect(() => {
    if (cooldown <= 0) return
    const timer = setTimeout(() => { setCooldown((s) => s - 1) }, 1000)
    return () => { clearTimeout(timer) }
  }, [cooldown])

  const send = async () => {
    if (email.trim() === '') { notify.warning(t('setting.personal.bind.emailRequired')); return }
    if (needsTurnstile && turnstile === '') { notify.info(t('setting.personal.bind.turnstileWait')); return }
    setSending(true)
    try {
      const res = await requestEnvelope<null>('GET', '/api/verification', { query: { email: email.trim(), turnstile } })
      notify.success(res.message !== '' ? res.message : t('setting.personal.bind.codeSent'))
      setCooldown(RESEND_COOLDOWN_S)
    } catch (err) {
      notify.error(err)
    } finally {
      setSending(false)
    }
  }
  const bind = async (e: FormEvent) => {
    e.preventDefault()
    if (email.trim() === '') { notify.warning(t('setting.personal.bind.emailRequired')); return }
    if (code.trim() === '') { notify.warning(t('setting.personal.bind.codeRequired')); return }
    setBinding(true)
    try {
      // Changing the address needs a fresh secure verification; the dialog asks for it when due.
      const res = await withVerification(async () => await requestEnvelope<UserView>('GET', '/api/oauth/email/bind', { query: { email: email.trim(), code: code.trim() } }))
      onBound(res.data, res.message !== '' ? res.message : t('setting.personal.bind.emailBound'))
    } catch (err) {
      notify.error(err)
    } finally {
      setBinding(false)
    }
  }

  return (
    <Dialog open onClose={onClose} fullWidth fullScreen={small} slotProps={{ paper: { component: 'form', onSubmit: (e: FormEvent) => { void bind(e) } } }}>
      <DialogTitle>{t('setting.personal.bind.emailTitle')}</DialogTitle>
      <DialogContent>
        <Stack sx={{ gap: 2, pt: 1 }}>
          <Stack direction={{ xs: 'column', sm: 'row' }} sx={{ gap: 1 }}>
            <TextField
              label={t('setting.personal.bind.emailAddress')}
              type='email'
              value={email}
              onChange={(e) => { setEmail(e.target.value) }}
              autoFocus
              fullWidth
              slotProps={{ htmlInput: { maxLength: 254 } }}
            />
            <Button variant='outlined' onClick={() => { void send() }} disabled={sending || cooldown > 0} sx={{ flexShrink: 0, whiteSpace: 'nowrap' }}>
              {cooldown > 0 ? t('setting.personal.bind.resend', { seconds: cooldown }) : t('setting.personal.bind.sendCode')}
            </Button>
          </Stack>
          <TextField
            label={t('setting.personal.bind.emailCode')}
            value={code}
            onChange={(e) => { setCode(e.target.value) }}
            slotProps={{ htmlInput: { maxLength: 32, autoComplete: 'one-time-code' } }}
          />
          {needsTurnstile && status !== undefined && <PersonalTurnstile siteKey={status.turnstile_site_key} onToken={setTurnstile} />}
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.cancel')}</Button>
        <Button type='submit' variant='contained' disabled={binding}>{t('setting.personal.bind.bind')}</Button>
      </DialogActions>
    </Dialog>
  )
}

function WeChatDialog ({ onClose, onBound }: DialogProps) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const [code, setCode] = useState('')
  const { act, busy } = useAction()
  const bind = async (e: FormEvent) => {
    e.preventDefault()
    if (code.trim() === '') return
    await act(async () => {
      const res = await requestEnvelope<UserView>('GET', '/api/oauth/wechat/bind', { query: { code: code.trim() } })
      onBound(res.data, t('setting.personal.bind.wechatBound'))
    })
  }
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth='xs' slotProps={{ paper: { component: 'form', onSubmit: (e: FormEvent) => { void bind(e) } } }}>
      <DialogTitle>{t('setting.personal.bind.wechatTitle')}</DialogTitle>
      <DialogContent>
        <Stack sx={{ gap: 2, alignItems: 'center', pt: 1 }}>
          {status?.wechat_qrcode !== undefined && status.wechat_qrcode !== '' && (
            <Box component='img' src={status.wechat_qrcode} alt='' sx={{ width: 200, maxWidth: '100%' }} />
          )}
          <Typography variant='body2' color='text.secondary'>{t('setting.personal.bind.wechatHelp')}</Typography>
          <TextField label={t('setting.personal.bind.wechatCode')} value={code} onChange={(e) => { setCode(e.target.value) }} fullWidth autoFocus slotProps={{ htmlInput: { maxLength: 128 } }} />
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.cancel')}</Button>
        <Button type='submit' variant='contained' disabled={busy || code.trim() === ''}>{t('setting.personal.bind.bind')}</Button>
      </DialogActions>
    </Dialog>
  )
}

function TelegramDialog ({ onClose, onBound }: DialogProps) {
  const { t, i18n } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  // Signed in, the login endpoint binds the Telegram account to the caller instead of signing in.
  const bind = (answer: TelegramAnswer) => {
    const query = Object.fromEntries(Object.entries(answer).map(([k, v]) => [k, String(v)]))
    requestEnvelope<UserView>('GET', '/api/oauth/telegram/login', { query: { ...query, lang: i18n.language } })
      .then((res) => { onBound(res.data, t('setting.personal.bind.telegramBound')) }, (err: unknown) => { notify.error(err) })
  }
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth='xs'>
      <DialogTitle>{t('setting.personal.bind.telegram')}</DialogTitle>
      <DialogContent>
        <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>{t('setting.personal.bind.telegramHelp')}</Typography>
        {status !== undefined && <PersonalTelegramWidget bot={status.telegram_bot_name} onAuth={bind} />}
      </DialogContent>
      <DialogActions><Button onClick={onClose}>{t('common.close')}</Button></DialogActions>
    </Dialog>
  )
}
