import type { PublicCustomOAuthProvider } from '@modelgate/contracts'
import Button from '@mui/material/Button'
import LoginIcon from '@mui/icons-material/Login'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'
import { storedAff } from '../auth/api'
import { authorizeUrl } from './api'

/**
 * One button per enabled OpenID Connect / OAuth 2.0 provider: the server starts the sign-in (PKCE,
 * state, nonce) and the browser goes to the provider's authorization page.
 */
export function CustomOAuthLoginButtons ({ providers }: { providers: readonly PublicCustomOAuthProvider[] }) {
  const { t } = useTranslation()
  const notify = useNotify()
  const [busy, setBusy] = useState(false)
  const go = (slug: string) => {
    setBusy(true)
    authorizeUrl(slug, storedAff()).then((url) => { window.location.href = url }, (err: unknown) => {
      notify.error(err)
      setBusy(false)
    })
  }
  return providers.map((p) => (
    <Button
      key={p.id}
      variant='outlined'
      startIcon={<LoginIcon />}
      disabled={busy}
      aria-label={t('customOAuth.login.with', { name: p.name })}
      data-testid={`oauth-login-${p.slug}`}
      onClick={() => { go(p.slug) }}
      sx={{ overflowWrap: 'anywhere' }}
    >
      {p.name}
    </Button>
  ))
}
