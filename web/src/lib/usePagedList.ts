import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import type { Page } from '../api/client'
import { useNotify } from '../components/Notify'
import type { Paging } from '../components/PagedTable'
import { usePageSize } from './usePersistentState'

export interface PagedListOptions<T> {
  /** Where the page size is remembered, and its default (usePageSize). */
  sizeKey?: string
  sizeDefault?: number
  /** Called with each page that arrives (not with the rows changed through `setItems`). */
  onLoad?: (items: T[]) => void
}

/**
 * One page of a server-side list. `load` is called again whenever it changes (make it with
 * useCallback over the filters), the page or the size changes, or `reload()` is called. Errors
 * become toasts.
 */
export function usePagedList<T> (load: (page: number, size: number) => Promise<Page<T>>, options: PagedListOptions<T> = {}) {
  const notify = useNotify()
  const [size, setSize] = usePageSize(options.sizeKey, options.sizeDefault)
  const [page, setPage] = useState(1)
  const [items, setItems] = useState<T[]>([])
  const [total, setTotal] = useState(0)
  // The first load starts at once: no "nothing here" flashes before it.
  const [loading, setLoading] = useState(true)
  const [generation, setGeneration] = useState(0)
  const reload = useCallback(() => { setGeneration((g) => g + 1) }, [])
  // Read through a ref: a new callback on each render must not load again.
  const onLoad = useRef(options.onLoad)
  useEffect(() => { onLoad.current = options.onLoad })

  useEffect(() => {
    let live = true
    setLoading(true)
    load(page, size).then((p) => {
      if (!live) return
      // The last row of the last page went away (deleted, say): show the page before it.
      if (p.items.length === 0 && page > 1) {
        setPage(page - 1)
        return
      }
      setItems(p.items)
      setTotal(p.total)
      onLoad.current?.(p.items)
    }, (err: unknown) => { if (live) notify.error(err) }).finally(() => { if (live) setLoading(false) })
    return () => { live = false }
  }, [load, page, size, generation, notify])

  const paging = useMemo<Paging>(() => ({ total, page, size, onPage: setPage, onSize: setSize }), [total, page, size, setSize])
  return { items, setItems, total, loading, page, setPage, size, reload, paging }
}
