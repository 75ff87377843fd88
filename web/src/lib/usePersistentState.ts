import { useCallback, useState } from 'react'

/** State remembered in localStorage under `key` (page sizes, id sort, ...). */
export function usePersistentState<T> (key: string, initial: T): [T, (value: T) => void] {
  const [value, setValue] = useState<T>(() => {
    try {
      const text = localStorage.getItem(key)
      return text === null ? initial : JSON.parse(text) as T
    } catch {
      return initial
    }
  })
  const set = useCallback((v: T) => {
    localStorage.setItem(key, JSON.stringify(v))
    setValue(v)
  }, [key])
  return [value, set]
}

/** Page sizes offered by every table (docs/domain.md). */
export const PAGE_SIZES = [10, 20, 50, 100]

/** The page size shared by the screens that do not keep their own, remembered under `page-size`. */
export function usePageSize (key = 'page-size', initial = 20): [number, (v: number) => void] {
  return usePersistentState<number>(key, initial)
}
