import type { StatusData } from '@modelgate/contracts'
import { createContext, useContext, useEffect, useState } from 'react'
import { get } from './client'

const STORAGE_KEY = 'status'

function stored (): StatusData | undefined {
  try {
    const text = localStorage.getItem(STORAGE_KEY)
    return text === null ? undefined : JSON.parse(text) as StatusData
  } catch {
    return undefined
  }
}

export interface StatusState { status: StatusData | undefined, error: boolean, reload: () => void }

/** The public status object, kept locally so the shell renders at once on the next load. */
export function useStatusLoader (): StatusState {
  const [status, setStatus] = useState<StatusData | undefined>(stored)
  const [error, setError] = useState(false)
  const [generation, setGeneration] = useState(0)
  useEffect(() => {
    let live = true
    get<StatusData>('/api/status').then((s) => {
      if (!live) return
      setStatus(s)
      setError(false)
      localStorage.setItem(STORAGE_KEY, JSON.stringify(s))
    }, () => { if (live) setError(true) })
    return () => { live = false }
  }, [generation])
  return { status, error, reload: () => { setGeneration((g) => g + 1) } }
}

export const StatusContext = createContext<StatusState>({ status: undefined, error: false, reload: () => {} })

/** The status object of the running console (provided once by App). */
export function useStatus (): StatusState {
  return useContext(StatusContext)
}
