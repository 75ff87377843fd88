import { useCallback, useMemo, useState } from 'react'
import type { Page } from '../api/client'
import type { Paging } from '../components/PagedTable'
import { useLoader } from './useLoad'
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
  const [size, setSize] = usePageSize(options.sizeKey, options.sizeDefault)
  const [page, setPage] = useState(1)
  const [items, setItems] = useState<T[]>([])
  const [total, setTotal] = useState(0)

  const loadPage = useCallback(async () => await load(page, size), [load, page, size])
  // The answer goes to the callbacks of the latest render (useLoader): new ones do not load again.
  const { loading, reload } = useLoader(loadPage, (p) => {
    // The last row of the last page went away (deleted, say): show the page before it.
    if (p.items.length === 0 && page > 1) {
      setPage(page - 1)
      return
    }
    setItems(p.items)
    setTotal(p.total)
    options.onLoad?.(p.items)
  })

  const paging = useMemo<Paging>(() => ({ total, page, size, onPage: setPage, onSize: setSize }), [total, page, size, setSize])
  return { items, setItems, total, loading, page, setPage, size, reload, paging }
}
