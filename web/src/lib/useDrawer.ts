import { useCallback, useState } from 'react'
import { useLocation, useNavigate, useParams } from 'react-router-dom'

export interface Drawer {
  open: boolean
  /** The row the drawer shows; undefined: a new one. Kept while the drawer slides out, so its content does not switch to an empty form meanwhile. */
  id: number | undefined
  openNew: () => void
  openFor: (id: number) => void
  close: () => void
  /** Closes the drawer and reloads the list after a save. */
  saved: () => void
}

/** A create/edit drawer over a list. */
export function useDrawer (reload?: () => void): Drawer {
  const [state, setState] = useState<{ open: boolean, id: number | undefined }>({ open: false, id: undefined })
  const openNew = useCallback(() => { setState({ open: true, id: undefined }) }, [])
  const openFor = useCallback((id: number) => { setState({ open: true, id }) }, [])
  const close = useCallback(() => { setState((d) => ({ ...d, open: false })) }, [])
  const saved = useCallback(() => {
    close()
    reload?.()
  }, [close, reload])
  return { ...state, openNew, openFor, close, saved }
}

/**
 * A drawer that follows the address, so `{base}/add` and `{base}/edit/{id}` can be opened directly
 * (the routes must render the list at both); closing goes back to `base`.
 */
export function useRouteDrawer (base: string, reload?: () => void): Drawer {
  const navigate = useNavigate()
  const location = useLocation()
  const params = useParams<{ id?: string }>()
  const adding = location.pathname.replace(/\/+$/, '').endsWith(`${base}/add`)
  const editId = params.id === undefined ? undefined : Number(params.id)
  const open = adding || (editId !== undefined && Number.isSafeInteger(editId) && editId > 0)
  const [kept, setKept] = useState<number | undefined>(editId)
  if (open && kept !== editId) setKept(editId)
  const openNew = useCallback(() => { void navigate(`${base}/add`) }, [navigate, base])
  const openFor = useCallback((id: number) => { void navigate(`${base}/edit/${id}`) }, [navigate, base])
  const close = useCallback(() => { void navigate(base) }, [navigate, base])
  const saved = useCallback(() => {
    close()
    reload?.()
  }, [close, reload])
  return { open, id: open ? editId : kept, openNew, openFor, close, saved }
}
