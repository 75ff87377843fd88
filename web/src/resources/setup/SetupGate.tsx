import { useEffect } from 'react'
import { useLocation, useNavigate } from 'react-router-dom'
import { getSetup } from './api'

/**
 * Sends every visitor to /setup while the system has no account (first run without
 * INITIAL_ROOT_PASSWORD). Asked once per load; an unreachable server changes nothing here.
 */
export function SetupGate () {
  const navigate = useNavigate()
  const { pathname } = useLocation()
  const onSetup = pathname === '/setup'
  useEffect(() => {
    if (onSetup) return
    let live = true
    getSetup().then((s) => {
      if (live && !s.status) navigate('/setup', { replace: true })
    }, () => {})
    return () => { live = false }
  }, [navigate, onSetup])
  return null
}
