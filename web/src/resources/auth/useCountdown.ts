import { useEffect, useState } from 'react'

/** Seconds to wait before a mail may be sent again (docs/domain.md). */
export const RESEND_COOLDOWN_S = 30

/** A per-second countdown: `left` seconds remain; `start(n)` begins one. */
export function useCountdown (): { left: number, start: (seconds?: number) => void } {
  const [left, setLeft] = useState(0)
  useEffect(() => {
    if (left <= 0) return
    const timer = setTimeout(() => { setLeft((n) => n - 1) }, 1000)
    return () => { clearTimeout(timer) }
  }, [left])
  return { left, start: (seconds = RESEND_COOLDOWN_S) => { setLeft(seconds) } }
}
