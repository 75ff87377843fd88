import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogContentText from '@mui/material/DialogContentText'
import DialogTitle from '@mui/material/DialogTitle'
import { useTranslation } from 'react-i18next'
import { Link as RouterLink, useLocation, useNavigate } from 'react-router-dom'
import { useAuth } from '../../auth/AuthContext'

/** The navigation state a sign-in with the default password lands with. */
export const DEFAULT_PASSWORD_STATE = { defaultPasswordWarning: true } as const

const arrivedWithWarning = (state: unknown): boolean =>
  (state as { defaultPasswordWarning?: unknown } | null)?.defaultPasswordWarning === true

/**
 * The warning a super administrator still using the default password reads on arriving in the
 * console after signing in (as new-api does), with the way to change it. It opens once per
 * sign-in: closing it drops the navigation state that opened it.
 */
export function DefaultPasswordDialog () {
  const { t } = useTranslation()
  const { user } = useAuth()
  const location = useLocation()
  const navigate = useNavigate()
  const open = user?.password_is_default === true && arrivedWithWarning(location.state)
  const later = () => { navigate({ pathname: location.pathname, search: location.search, hash: location.hash }, { replace: true, state: null }) }
  return (
    <Dialog open={open} onClose={later} aria-labelledby='default-password-title'>
      <DialogTitle id='default-password-title'>{t('auth.defaultPassword.title')}</DialogTitle>
      <DialogContent>
        <DialogContentText>{t('auth.defaultPassword.body')}</DialogContentText>
      </DialogContent>
      <DialogActions>
        <Button onClick={later}>{t('auth.defaultPassword.later')}</Button>
        <Button variant='contained' component={RouterLink} to='/setting' replace>{t('auth.defaultPassword.change')}</Button>
      </DialogActions>
    </Dialog>
  )
}
