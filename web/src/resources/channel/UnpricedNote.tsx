import Alert from '@mui/material/Alert'
import Link from '@mui/material/Link'
import { Fragment } from 'react'
import { useTranslation } from 'react-i18next'
import { Link as RouterLink } from 'react-router-dom'
import { isRoot, useAuth } from '../../auth/AuthContext'
import { priceEditorPath } from '../settings-admin/priceLink'

/**
 * The chosen models that have no price: the relay refuses them until a ratio or a per-call price
 * is set. The super admin gets each as a link to the price editor, opened on that model.
 */
export function UnpricedNote ({ models, priced }: { models: string[], priced: ReadonlySet<string> | undefined }) {
  const { t } = useTranslation()
  const { user } = useAuth()
  if (priced === undefined) return null
  const unpriced = models.filter((m) => !priced.has(m))
  if (unpriced.length === 0) return null
  const root = isRoot(user)
  return (
    <Alert severity='warning' data-testid='unpriced-note' sx={{ mt: 1 }}>
      {t(root ? 'channel.unpriced.root' : 'channel.unpriced.admin', { count: unpriced.length })}{' '}
      {unpriced.map((m, i) => (
        <Fragment key={m}>
          {i > 0 && ', '}
          {root
            ? <Link component={RouterLink} to={priceEditorPath(m)}>{m}</Link>
            : m}
        </Fragment>
      ))}
    </Alert>
  )
}
