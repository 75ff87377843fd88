import { ROLES, type UserView } from '@modelgate/contracts'
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react'
import { useNavigate } from 'react-router-dom'
import { get, onTwoFactorSetupRequired, onUnauthorized } from '../api/client'
import { type StoredUser, storedUser, storeUser } from '../api/session'

export interface AuthState {
  user: StoredUser | undefined
  /** Keeps the user after a login or a profile change. */
  signIn: (user: StoredUser) => void
  /** Ends the session on the server and here. */
  signOut: () => Promise<void>
  /** Re-reads the signed-in user from `/api/user/self`. */
  refresh: () => Promise<UserView | undefined>
}

const AuthContext = createContext<AuthState | undefined>(undefined)

export function AuthProvider ({ children }: { children: ReactNode }) {
  const [user, setUser] = useState<StoredUser | undefined>(storedUser)
  const navigate = useNavigate()

  const signIn = useCallback((u: StoredUser) => {
    storeUser(u)
    setUser(u)
  }, [])

  useEffect(() => {
    // A 401 anywhere means the session is gone: forget the user and ask for a new login.
    onUnauthorized(() => {
      storeUser(undefined)
      setUser(undefined)
      if (!window.location.pathname.startsWith('/login')) navigate('/login?expired=true')
    })
    // An admin without 2FA while the super admin requires it: the setup screen, before anything else.
    onTwoFactorSetupRequired(() => {
      if (window.location.pathname !== '/two-factor') navigate('/two-factor', { replace: true })
    })
  }, [navigate])

  const signOut = useCallback(async () => {
    await get('/api/user/logout').catch(() => undefined)
    storeUser(undefined)
    setUser(undefined)
  }, [])

  const refresh = useCallback(async () => {
    if (storedUser() === undefined) return undefined
    const self = await get<UserView>('/api/user/self')
    signIn(self)
    return self
  }, [signIn])

  const value = useMemo(() => ({ user, signIn, signOut, refresh }), [user, signIn, signOut, refresh])
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>
}

export function useAuth (): AuthState {
  const ctx = useContext(AuthContext)
  if (ctx === undefined) throw new Error('useAuth outside AuthProvider')
  return ctx
}

export const isAdmin = (user: StoredUser | undefined): boolean => (user?.role ?? 0) >= ROLES.admin
export const isRoot = (user: StoredUser | undefined): boolean => (user?.role ?? 0) >= ROLES.root
