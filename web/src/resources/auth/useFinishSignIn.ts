import { ROLES, type UserView } from '@modelgate/contracts'
import { useCallback } from 'react'
import { useTranslation } from 'react-i18next'
import { useLocation, useNavigate } from 'react-router-dom'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { twoFactorStatus } from '../two-factor/api'
import { DEFAULT_PASSWORD_STATE } from './DefaultPasswordDialog'

/** The 2FA setup screen an admin is sent to while TwoFactorRequiredForAdmins is on and 2FA is not. */
export const TWO_FACTOR_SETUP_PATH = '/two-factor'

/** The console home, where a sign-in lands unless the guard sent the user from elsewhere. */
export const CONSOLE_HOME = '/token'

/** Where the route guard was headed before it asked for a login (never back to a sign-in screen). */
export function afterLogin (state: unknown): string {
  const from = (state as { from?: unknown } | null)?.from
  if (typeof from !== 'string' || !from.startsWith('/') || from.startsWith('//')) return CONSOLE_HOME
  return /^\/(login|register|reset|oauth)\b/.test(from) ? CONSOLE_HOME : from
}

/**
 * Keeps a signed-in user, says so, and opens the page the user was headed to; a super
 * administrator still on the default password is warned there (DefaultPasswordDialog).
 */
export function useFinishSignIn (): (user: UserView) => void {
  const { signIn } = useAuth()
  const notify = useNotify()
  const navigate = useNavigate()
  const location = useLocation()
  const { t } = useTranslation()
  return useCallback((user: UserView) => {
    signIn(user)
    notify.success(t('auth.login.loggedIn'))
    const go = () => { navigate(afterLogin(location.state), { replace: true, state: user.password_is_default ? DEFAULT_PASSWORD_STATE : null }) }
    if (user.role < ROLES.admin) { go(); return }
    // An admin who must set up 2FA first (TwoFactorRequiredForAdmins) sees the setup screen before anything else.
    twoFactorStatus().then((s) => { if (s.setup_required) navigate(TWO_FACTOR_SETUP_PATH, { replace: true }); else go() }, go)
  }, [signIn, notify, navigate, location.state, t])
}
