import type { StatusData } from '@modelgate/contracts'
import { useEffect, useState } from 'react'
import { api } from './client'

const STORAGE_KEY = 'status'

function stored (): StatusData | undefined {
  try {
    const text = localStorage.getItem(STORAGE_KEY)
    return text === null ? undefined : JSON.parse(text) as StatusData
  } catch {
    return undefined
  }
}

/** The public status object, kept locally so the shell renders at once on the next load. */
export function useStatus (): { status: StatusData | undefined, error: boolean } {
  const [status, setStatus] = useState<StatusData | undefined>(stored)
  const [error, setError] = useState(false)
  useEffect(() => {
    let live = true
    api.status().then((s) => {
      if (!live) return
      setStatus(s)
      localStorage.setItem(STORAGE_KEY, JSON.stringify(s))
    }, () => { if (live) setError(true) })
    return () => { live = false }
  }, [])
  return { status, error }
}
