import { useCallback, useMemo, useState } from 'react'
import type { Page } from '../../api/client'
import { usePagedList } from '../../lib/usePagedList'
import { isUnfinished } from './results'
import type { TaskFilterForm } from './TaskFilters'
import { useLiveRefresh } from './useLiveRefresh'

/**
 * A paged task list with its filter form (the shared page size). Searching shows page 1 of the
 * form's query, and searching again refreshes, as each search makes a new query object; reset
 * searches with the initial form. While a task on the page is unfinished the page is fetched again
 * quietly (no loading bar) every few seconds, so status, progress and results change live; `live`
 * says whether it is.
 */
export function usePagedTasks<T extends { status: string }, Q> (load: (query: Q, page: number, size: number) => Promise<Page<T>>, queryOf: (form: TaskFilterForm) => Q, initialForm: () => TaskFilterForm) {
  const [form, setForm] = useState(initialForm)
  const [query, setQuery] = useState(() => queryOf(form))
  // The total of the last quiet refresh (tasks submitted meanwhile); forgotten at each real load.
  const [liveTotal, setLiveTotal] = useState<number>()
  const onLoad = useCallback(() => { setLiveTotal(undefined) }, [])
  const { items, setItems, loading, page, size, setPage, paging } = usePagedList(useCallback(async (page: number, size: number) => await load(query, page, size), [load, query]), { onLoad })
  const live = !loading && items.some((row) => isUnfinished(row.status))
  const fetchPage = useCallback(async () => await load(query, page, size), [load, query, page, size])
  useLiveRefresh(live, fetchPage, (p: Page<T>) => {
    setItems(p.items)
    setLiveTotal(p.total)
  })
  const search = (f: TaskFilterForm) => {
    setQuery(queryOf(f))
    setPage(1)
  }
  const filters = {
    form,
    onChange: setForm,
    onSubmit: () => { search(form) },
    onReset: () => {
      const f = initialForm()
      setForm(f)
      search(f)
    }
  }
  const livePaging = useMemo(() => liveTotal === undefined ? paging : { ...paging, total: liveTotal }, [paging, liveTotal])
  return { items, loading, live, paging: livePaging, filters }
}
