import { useCallback, useState } from 'react'

/** A set of selected ids with the toggles of the row checkboxes and of the select-all checkbox. */
export function useSelection<K> () {
  const [selected, setSelected] = useState<ReadonlySet<K>>(() => new Set())
  const toggle = useCallback((k: K) => {
    setSelected((s) => {
      const next = new Set(s)
      if (next.has(k)) next.delete(k)
      else next.add(k)
      return next
    })
  }, [])
  /** Selects every one of `shown`, or clears them when all are selected; others stay as they are. */
  const toggleAll = useCallback((shown: readonly K[]) => {
    setSelected((s) => {
      const all = shown.every((k) => s.has(k))
      const next = new Set(s)
      for (const k of shown) {
        if (all) next.delete(k)
        else next.add(k)
      }
      return next
    })
  }, [])
  const clear = useCallback(() => { setSelected(new Set()) }, [])
  return { selected, toggle, toggleAll, clear }
}

export type Selection<K> = ReturnType<typeof useSelection<K>>
