import { useEffect, useRef, useState } from 'react'
import { useNotify } from '../components/Notify'

export interface RecordCallbacks<T> {
  /** The record arrived: fill the form from it. */
  onLoad: (record: T) => void
  /** The record could not be read (the error is shown): close the form. */
  onFail: () => void
}

/**
 * The record an edit form shows, read each time the form opens for `id` (undefined: a new record,
 * nothing to read). `waiting` holds until the record for `id` is in.
 */
export function useRecord<T> (open: boolean, id: number | undefined, get: (id: number) => Promise<T>, callbacks: RecordCallbacks<T>) {
  const notify = useNotify()
  const [loaded, setLoaded] = useState<{ id: number, record: T }>()
  const [loading, setLoading] = useState(false)
  // Read through a ref: new callbacks on each parent render must not read the record again.
  const latest = useRef(callbacks)
  useEffect(() => { latest.current = callbacks })

  useEffect(() => {
    if (!open) return
    setLoaded(undefined)
    setLoading(id !== undefined)
    if (id === undefined) return
    let live = true
    get(id).then((record) => {
      if (!live) return
      setLoaded({ id, record })
      latest.current.onLoad(record)
    }, (err: unknown) => {
      if (!live) return
      notify.error(err)
      latest.current.onFail()
    }).finally(() => { if (live) setLoading(false) })
    return () => { live = false }
  }, [open, id, get, notify])

  // While the form slides out (closed, `id` perhaps gone), it keeps what it showed.
  const record = loaded !== undefined && (loaded.id === id || !open) ? loaded.record : undefined
  return { record, loading, waiting: id !== undefined && loaded?.id !== id }
}
