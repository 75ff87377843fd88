import Box from '@mui/material/Box'
import { type ReactNode, useEffect, useRef, useState } from 'react'
import { useStatus } from '../../api/useStatus'
import { loadScript } from './scripts'

interface TurnstileApi {
  render: (el: HTMLElement, opts: Record<string, unknown>) => string
  reset: (id: string) => void
  remove: (id: string) => void
}

declare global {
  interface Window { turnstile?: TurnstileApi }
}

const SCRIPT = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit'

/**
 * The Cloudflare Turnstile widget. `onToken` gets each new token ('' when it expires). A token
 * is good for one request only, so the page bumps `generation` after using one: the widget then
 * solves a fresh challenge.
 */
export function Turnstile ({ siteKey, onToken, generation }: { siteKey: string, onToken: (token: string) => void, generation: number }) {
  const box = useRef<HTMLDivElement>(null)
  const widget = useRef<string | undefined>(undefined)
  const callback = useRef(onToken)
  callback.current = onToken

  useEffect(() => {
    let live = true
    loadScript(SCRIPT).then(() => {
      if (!live || box.current === null || window.turnstile === undefined) return
      widget.current = window.turnstile.render(box.current, {
        sitekey: siteKey,
        callback: (token: string) => { callback.current(token) },
        'expired-callback': () => { callback.current('') },
        'error-callback': () => { callback.current('') }
      })
    }, () => { callback.current('') })
    return () => {
      live = false
      if (widget.current !== undefined) window.turnstile?.remove(widget.current)
      widget.current = undefined
    }
  }, [siteKey])

  useEffect(() => {
    if (generation === 0 || widget.current === undefined) return
    callback.current('')
    window.turnstile?.reset(widget.current)
  }, [generation])

  return <Box ref={box} data-testid='turnstile' sx={{ display: 'flex', justifyContent: 'center', minHeight: 65, maxWidth: '100%', overflow: 'hidden' }} />
}

/** A form's Turnstile: the widget to render (null when the check is off) and the token for the next request. */
export interface TurnstileGate {
  widget: ReactNode
  /** True when the check is on and no token has arrived yet (docs/domain.md: ask to retry in a few seconds). */
  missing: boolean
  /** The token for one request ('' when the check is off); the widget then fetches the next one. */
  spend: () => string
}

export function useTurnstile (): TurnstileGate {
  const { status } = useStatus()
  const [token, setToken] = useState('')
  const [generation, setGeneration] = useState(0)
  const on = status?.turnstile_check === true && status.turnstile_site_key !== ''
  const widget = on ? <Turnstile siteKey={status.turnstile_site_key} onToken={setToken} generation={generation} /> : null
  return {
    widget,
    missing: on && token === '',
    spend: () => {
      if (!on) return ''
      setGeneration((g) => g + 1)
      return token
    }
  }
}
