import type { UserView } from '@modelgate/contracts'
import Button from '@mui/material/Button'
import KeyIcon from '@mui/icons-material/KeyOutlined'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'
import { passkeysSupported, signInWithPasskey } from './ceremony'

/**
 * "Sign in with a passkey": no username, the browser offers the passkeys it holds for this site;
 * a passkey is a complete sign-in (no second step). Shown when /api/status says passkeys are on.
 */
export function PasskeyLoginButton ({ onSignedIn }: { onSignedIn: (user: UserView) => void }) {
  const { t } = useTranslation()
  const notify = useNotify()
  const [busy, setBusy] = useState(false)
  const supported = passkeysSupported()
  const start = () => {
    setBusy(true)
    signInWithPasskey().then(({ user }) => { onSignedIn(user) }, (err: unknown) => {
      setBusy(false)
      notify.error(err)
    })
  }
  return (
    <Button
      variant='outlined'
      size='large'
      fullWidth
      startIcon={<KeyIcon />}
      disabled={busy || !supported}
      title={supported ? undefined : t('passkey.errors.unsupported')}
      onClick={start}
      data-testid='passkey-login'
    >
      {busy ? t('passkey.login.waiting') : t('passkey.login.button')}
    </Button>
  )
}
