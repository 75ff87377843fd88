import { type Dispatch, type SetStateAction, useCallback, useEffect, useRef, useState } from 'react'
import { useNotify } from '../components/Notify'

export interface LoaderOptions {
  /** A failed load shows no toast (the caller shows `error`, or nothing). */
  quiet?: boolean
  /** Called after a failed load (and its toast). */
  onError?: (err: unknown) => void
}

/**
 * Runs `load` when it changes (make it with useCallback over what it reads; undefined loads
 * nothing, e.g. while a drawer is closed) and at each `reload()`, and hands each answer to `apply`.
 * An answer that arrives after the next load started, or after the screen went away, is dropped.
 * A failure becomes `error` and a toast (unless quiet); the next answer clears `error`.
 */
export function useLoader<T> (load: (() => Promise<T>) | undefined, apply: (answer: T) => void, options: LoaderOptions = {}) {
  const notify = useNotify()
  // The first load starts at once: no "nothing here" flashes before it.
  const [loading, setLoading] = useState(load !== undefined)
  const [error, setError] = useState<unknown>()
  const [generation, setGeneration] = useState(0)
  const reload = useCallback(() => { setGeneration((g) => g + 1) }, [])
  // Read through a ref: new callbacks on each render must not load again.
  const latest = useRef({ apply, options })
  useEffect(() => { latest.current = { apply, options } })

  useEffect(() => {
    if (load === undefined) return
    let live = true
    setLoading(true)
    load().then((answer) => {
      if (!live) return
      setError(undefined)
      latest.current.apply(answer)
    }, (err: unknown) => {
      if (!live) return
      setError(err)
      if (latest.current.options.quiet !== true) notify.error(err)
      latest.current.options.onError?.(err)
    }).finally(() => { if (live) setLoading(false) })
    return () => { live = false }
  }, [load, generation, notify])

  return { loading: loading && load !== undefined, error, reload }
}

export interface LoadOptions<T> extends LoaderOptions {
  /** What `data` holds before the first answer (and after `fresh` forgets one). */
  initial?: T
  /** A new `load` starts from `initial` again rather than showing the previous answer meanwhile (a reload keeps it). */
  fresh?: boolean
}

export interface Loaded<T> {
  data: T
  setData: Dispatch<SetStateAction<T>>
  loading: boolean
  /** The last load's failure; undefined once a load succeeds. */
  error: unknown
  reload: () => void
}

/** The answer of `load` as state, loaded as {@link useLoader} says. */
export function useLoad<T> (load: (() => Promise<T>) | undefined, options: LoadOptions<T> & { initial: T }): Loaded<T>
export function useLoad<T> (load: (() => Promise<T>) | undefined, options?: LoadOptions<T>): Loaded<T | undefined>
export function useLoad<T> (load: (() => Promise<T>) | undefined, options: LoadOptions<T> = {}): Loaded<T | undefined> {
  const [data, setData] = useState<T | undefined>(options.initial)
  const initial = useRef(options.initial)
  const fresh = options.fresh === true
  useEffect(() => { if (fresh && load !== undefined) setData(initial.current) }, [load, fresh])
  const { loading, error, reload } = useLoader(load, setData, options)
  return { data, setData, loading, error, reload }
}
