import Box from '@mui/material/Box'
import { useEffect, useRef } from 'react'
import { get } from '../../api/client'
import { githubAuthorizeUrl, linuxdoAuthorizeUrl } from '../auth/api'

/** Adds a third-party script once per page; resolves when it has loaded. */
function loadScript (src: string): Promise<void> {
  const existing = document.querySelector<HTMLScriptElement>(`script[src="${src}"]`)
  if (existing?.dataset['loaded'] === 'true') return Promise.resolve()
  return new Promise((resolve, reject) => {
    const script = existing ?? document.createElement('script')
    script.addEventListener('load', () => { script.dataset['loaded'] = 'true'; resolve() })
    script.addEventListener('error', () => { reject(new Error(`cannot load ${src}`)) })
    if (existing === null) {
      script.src = src
      script.async = true
      document.head.appendChild(script)
    }
  })
}

interface TurnstileApi {
  render: (el: HTMLElement, opts: { sitekey: string, callback: (token: string) => void, 'expired-callback': () => void }) => string
  remove: (id: string) => void
}

/** Cloudflare Turnstile: reports a fresh token, or '' when it expired. */
export function PersonalTurnstile ({ siteKey, onToken }: { siteKey: string, onToken: (token: string) => void }) {
  const ref = useRef<HTMLDivElement>(null)
  const callback = useRef(onToken)
  callback.current = onToken
  useEffect(() => {
    let widget: string | undefined
    let live = true
    void loadScript('https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit').then(() => {
      const api = (window as unknown as { turnstile?: TurnstileApi }).turnstile
      if (!live || api === undefined || ref.current === null) return
      widget = api.render(ref.current, {
        sitekey: siteKey,
        callback: (token) => { callback.current(token) },
        'expired-callback': () => { callback.current('') }
      })
    }, () => {})
    return () => {
      live = false
      if (widget !== undefined) (window as unknown as { turnstile?: TurnstileApi }).turnstile?.remove(widget)
    }
  }, [siteKey])
  return <Box ref={ref} sx={{ my: 1, maxWidth: '100%', overflow: 'hidden' }} />
}

/** The fields the Telegram Login Widget hands to its callback (all signed by Telegram). */
export type TelegramAnswer = Record<string, string | number>

const TELEGRAM_CALLBACK = 'modelgateTelegramBind'

/** The Telegram Login Widget for `bot`; `onAuth` gets the signed answer. */
export function PersonalTelegramWidget ({ bot, onAuth }: { bot: string, onAuth: (answer: TelegramAnswer) => void }) {
  const ref = useRef<HTMLDivElement>(null)
  const callback = useRef(onAuth)
  callback.current = onAuth
  useEffect(() => {
    const host = ref.current
    if (host === null) return
    // The widget calls a global function named in data-onauth.
    const global = window as unknown as Record<string, unknown>
    global[TELEGRAM_CALLBACK] = (answer: TelegramAnswer) => { callback.current(answer) }
    const script = document.createElement('script')
    script.src = 'https://telegram.org/js/telegram-widget.js?22'
    script.async = true
    script.dataset['telegramLogin'] = bot
    script.dataset['size'] = 'large'
    script.dataset['requestAccess'] = 'write'
    script.dataset['onauth'] = `${TELEGRAM_CALLBACK}(user)`
    host.appendChild(script)
    return () => {
      host.replaceChildren()
      delete global[TELEGRAM_CALLBACK]
    }
  }, [bot])
  return <Box ref={ref} sx={{ minHeight: 40 }} />
}

/**
 * The provider's authorize page for binding. The state comes from the server (which also sets a
 * cookie tying it to this browser); the /oauth/<provider> callback page finishes the binding.
 */
export async function authorizeUrl (provider: 'github' | 'linuxdo', clientId: string, serverAddress: string): Promise<string> {
  const state = await get<string>('/api/oauth/state')
  return provider === 'github' ? githubAuthorizeUrl(clientId, state) : linuxdoAuthorizeUrl(clientId, state, serverAddress)
}
