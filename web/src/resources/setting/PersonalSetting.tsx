import { ROLES, type UserView } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import CircularProgress from '@mui/material/CircularProgress'
import { useCallback } from 'react'
import { useTranslation } from 'react-i18next'
import { useAuth } from '../../auth/AuthContext'
import { useLoad } from '../../lib/useLoad'
import { PersonalAffiliate } from './PersonalAffiliate'
import { PersonalBindings } from './PersonalBindings'
import { PersonalModels } from './PersonalModels'
import { PersonalPasskeys } from './PersonalPasskeys'
import { PersonalProfile } from './PersonalProfile'
import { PersonalAccessToken, PersonalDelete, PersonalPassword } from './PersonalSecurity'
import { PersonalSessions } from './PersonalSessions'
import { PersonalTwoFactor } from './PersonalTwoFactor'

/** The personal tab: profile, bindings, access token, password, invitations, models, deletion. */
export default function PersonalSetting () {
  const { t } = useTranslation()
  const { refresh, signIn } = useAuth()
  // A failure shows in place of the tab, with a retry.
  const { data: self, setData: setSelf, error: failure, reload } = useLoad(refresh, { quiet: true })
  const error = failure === undefined ? undefined : failure instanceof Error ? failure.message : String(failure)
  const changed = useCallback((u: UserView) => { setSelf(u); signIn(u) }, [signIn])

  if (error !== undefined && self === undefined) {
    return <Alert severity='error' action={<Button color='inherit' size='small' onClick={reload}>{t('common.refresh')}</Button>}>{error}</Alert>
  }
  if (self === undefined) return <CircularProgress sx={{ m: 4 }} />
  return (
    <Box sx={{ display: 'grid', gridTemplateColumns: { xs: 'minmax(0, 1fr)', md: 'repeat(2, minmax(0, 1fr))' }, gap: 2, alignItems: 'start' }}>
      <PersonalProfile self={self} onChange={changed} />
      <PersonalBindings self={self} onChange={changed} />
      <PersonalAffiliate self={self} onTransferred={reload} />
      <PersonalAccessToken self={self} />
      <PersonalPassword />
      <PersonalTwoFactor />
      <PersonalPasskeys />
      <PersonalSessions />
      <PersonalModels />
      {/* The super admin account cannot be deleted (docs/domain.md). */}
      {self.role < ROLES.root && <PersonalDelete self={self} />}
    </Box>
  )
}
