import type { CustomOAuthBindingView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Divider from '@mui/material/Divider'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import { Fragment, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useConfirm } from '../../components/Confirm'
import { useNotify } from '../../components/Notify'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { authorizeUrl, listBindings, unbind } from './api'

const NONE: CustomOAuthBindingView[] = []

interface Row { key: string, slug: string, name: string, providerId?: number, subject?: string, enabled: boolean }

/**
 * The caller's accounts at the super admin's OpenID Connect / OAuth 2.0 providers, inside the
 * bindings card: bind (a sign-in through the provider while signed in) and unbind.
 */
export function CustomOAuthBindingRows () {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const [confirm, confirmDialog] = useConfirm()
  const { data: bindings, reload } = useLoad(listBindings, { initial: NONE })
  const { act, busy: acting } = useAction(reload)
  // Set while the browser leaves for the provider.
  const [leaving, setLeaving] = useState(false)
  const busy = acting || leaving

  // Every enabled provider, plus bound ones that are no longer enabled (they can still be unbound).
  const rows: Row[] = (status?.custom_oauth_providers ?? []).map((p) => {
    const bound = bindings.find((b) => b.provider_id === p.id)
    return { key: `p${p.id}`, slug: p.slug, name: p.name, providerId: bound?.provider_id, subject: bound?.provider_user_id, enabled: true }
  })
  for (const b of bindings) {
    if (!rows.some((r) => r.providerId === b.provider_id)) {
      rows.push({ key: `b${b.provider_id}`, slug: b.provider_slug, name: b.provider_name, providerId: b.provider_id, subject: b.provider_user_id, enabled: false })
    }
  }

  const bind = async (row: Row) => {
    setLeaving(true)
    notify.info(t('customOAuth.bind.redirecting', { provider: row.name }))
    const url = await act(async () => await authorizeUrl(row.slug, ''), { reload: 'never' })
    if (url === undefined) setLeaving(false)
    else window.location.href = url
  }
  const remove = async (row: Row) => {
    if (row.providerId === undefined) return
    const ok = await confirm({ title: t('customOAuth.bind.unbindTitle', { provider: row.name }), body: t('customOAuth.bind.unbindBody', { provider: row.name }), action: t('customOAuth.bind.unbind'), danger: true })
    if (!ok) return
    const providerId = row.providerId
    await act(async () => await unbind(providerId), { done: (message) => message })
  }

  if (rows.length === 0) return confirmDialog
  return (
    <>
      {rows.map((row) => (
        <Fragment key={row.key}>
          <Divider flexItem sx={{ my: 1 }} />
          <Stack direction='row' data-testid={`binding-custom-${row.slug}`} sx={{ alignItems: 'center', gap: 1 }}>
            <Box sx={{ minWidth: 0, flex: 1 }}>
              <Typography variant='body2' color='text.secondary' sx={{ overflowWrap: 'anywhere' }}>
                {row.enabled ? row.name : `${row.name} (${t('customOAuth.bind.disabledProvider')})`}
              </Typography>
              <Typography sx={{ overflowWrap: 'anywhere' }} color={row.subject === undefined ? 'text.disabled' : undefined}>
                {row.subject ?? t('customOAuth.bind.notBound')}
              </Typography>
            </Box>
            {row.subject === undefined
              ? <Button size='small' variant='outlined' disabled={busy} onClick={() => { void bind(row) }}>{t('customOAuth.bind.bind')}</Button>
              : <Button size='small' color='error' disabled={busy} onClick={() => { void remove(row) }}>{t('customOAuth.bind.unbind')}</Button>}
          </Stack>
        </Fragment>
      ))}
      {confirmDialog}
    </>
  )
}
