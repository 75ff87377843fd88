import { useCallback, useState } from 'react'
import type { Page } from '../../api/client'
import { usePagedList } from '../../lib/usePagedList'
import type { TaskFilterForm } from './TaskFilters'

/**
 * A paged task list with its filter form (the shared page size). Searching shows page 1 of the
 * form's query, and searching again refreshes, as each search makes a new query object; reset
 * searches with the initial form.
 */
export function usePagedTasks<T, Q> (load: (query: Q, page: number, size: number) => Promise<Page<T>>, queryOf: (form: TaskFilterForm) => Q, initialForm: () => TaskFilterForm) {
  const [form, setForm] = useState(initialForm)
  const [query, setQuery] = useState(() => queryOf(form))
  const { items, loading, setPage, paging } = usePagedList(useCallback(async (page: number, size: number) => await load(query, page, size), [load, query]))
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
  return { items, loading, paging, filters }
}
