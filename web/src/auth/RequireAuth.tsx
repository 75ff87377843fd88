import { ROLES } from '@modelgate/contracts'
import Typography from '@mui/material/Typography'
import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { Navigate, useLocation } from 'react-router-dom'
import { useAuth } from './AuthContext'

/** Route guard: no stored user -> /login; a role below `role` -> a permission message. */
export function RequireAuth ({ children, role = ROLES.common }: { children: ReactNode, role?: number }) {
  const { user } = useAuth()
  const location = useLocation()
  const { t } = useTranslation()
  if (user === undefined) return <Navigate to='/login' replace state={{ from: location.pathname + location.search }} />
  if (user.role < role) return <Typography color='error' sx={{ mt: 4 }}>{t('common.forbidden')}</Typography>
  return <>{children}</>
}
