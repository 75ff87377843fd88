import { useCallback, useEffect, useState } from 'react'
import type { Page } from '../../api/client'
import { useNotify } from '../../components/Notify'
import { usePageSize } from '../../lib/usePersistentState'

/**
 * A paged task list: `search` shows page 1 of a new query (searching again refreshes, as the
 * query is a new object). The page size is the shared one.
 */
export function usePagedTasks<T, Q> (load: (query: Q, page: number, size: number) => Promise<Page<T>>, initial: () => Q) {
  const notify = useNotify()
  const [size, setSizeStored] = usePageSize()
  const [view, setView] = useState(() => ({ query: initial(), page: 1 }))
  const [items, setItems] = useState<T[]>([])
  const [total, setTotal] = useState(0)
  const [loading, setLoading] = useState(false)

  useEffect(() => {
    let live = true
    setLoading(true)
    load(view.query, view.page, size).then((p) => {
      if (!live) return
      setItems(p.items)
      setTotal(p.total)
    }, (err: unknown) => { if (live) notify.error(err) }).finally(() => { if (live) setLoading(false) })
    return () => { live = false }
  }, [load, view, size, notify])

  const search = useCallback((query: Q) => { setView({ query, page: 1 }) }, [])
  const setPage = useCallback((page: number) => { setView((v) => ({ ...v, page })) }, [])
  const setSize = (n: number) => {
    setSizeStored(n)
    setView((v) => ({ ...v, page: 1 }))
  }
  return { items, total, loading, page: view.page, setPage, size, setSize, search }
}
