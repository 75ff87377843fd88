import { useEffect, useRef } from 'react'

/** How often a list with unfinished tasks asks again. */
export const LIVE_REFRESH_MS = 5000

/**
 * While `active`, fetches again `ms` after the previous answer arrived and hands each answer to
 * `apply`: one request at a time, none while the page is hidden (it resumes at once when shown
 * again), and an answer that arrives after the list changed (another page, other filters: a new
 * `fetch`) or stopped being active is dropped. A failed request is tried again at the next turn
 * without a toast (the list's own loads report errors).
 */
export function useLiveRefresh<T> (active: boolean, fetch: () => Promise<T>, apply: (answer: T) => void, ms = LIVE_REFRESH_MS): void {
  // Read through a ref: a new callback on each render must not restart the timer.
  const applyRef = useRef(apply)
  useEffect(() => { applyRef.current = apply })

  useEffect(() => {
    if (!active) return
    let live = true
    let running = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const schedule = () => {
      clearTimeout(timer)
      timer = setTimeout(() => { void tick() }, ms)
    }
    const tick = async () => {
      timer = undefined
      // Hidden: wait for the page to be shown again (onVisibility).
      if (running || document.visibilityState === 'hidden') return
      running = true
      try {
        const answer = await fetch()
        if (live) applyRef.current(answer)
      } catch {
        // Tried again at the next turn.
      } finally {
        running = false
      }
      if (live) schedule()
    }
    const onVisibility = () => {
      if (document.visibilityState !== 'visible' || running) return
      clearTimeout(timer)
      void tick()
    }
    schedule()
    document.addEventListener('visibilitychange', onVisibility)
    return () => {
      live = false
      clearTimeout(timer)
      document.removeEventListener('visibilitychange', onVisibility)
    }
  }, [active, fetch, ms])
}
