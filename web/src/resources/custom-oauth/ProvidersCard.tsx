import type { CustomOAuthProviderView } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import CircularProgress from '@mui/material/CircularProgress'
import Divider from '@mui/material/Divider'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import AddIcon from '@mui/icons-material/Add'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useConfirm } from '../../components/Confirm'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { deleteProvider, listProviders } from './api'
import { ProviderDrawer } from './ProviderDrawer'

/** The super admin's OpenID Connect / OAuth 2.0 sign-in providers: list, add, edit, delete. */
export function CustomOAuthProvidersCard () {
  const { t } = useTranslation()
  const { status, reload: reloadStatus } = useStatus()
  const [confirm, confirmDialog] = useConfirm()
  // A failure shows in the card, with a retry.
  const { data: providers, error: failure, reload: load } = useLoad(listProviders, { quiet: true })
  const error = failure === undefined ? undefined : failure instanceof Error ? failure.message : String(failure)
  const { act } = useAction()
  const [editing, setEditing] = useState<CustomOAuthProviderView | 'new' | undefined>()

  const server = (status?.server_address ?? '').trim().replace(/\/+$/, '')
  const base = server !== '' ? server : window.location.origin
  const saved = () => {
    setEditing(undefined)
    load()
    // The sign-in page's buttons come from /api/status.
    reloadStatus()
  }
  const remove = async (p: CustomOAuthProviderView) => {
    const ok = await confirm({ title: t('customOAuth.card.deleteTitle', { name: p.name }), body: t('customOAuth.card.deleteBody'), action: t('customOAuth.card.delete'), danger: true })
    if (!ok) return
    if (await act(async () => await deleteProvider(p.id), { done: (message) => message }) !== undefined) saved()
  }

  const title = t('customOAuth.card.title')
  return (
    <Paper component='section' aria-label={title} data-testid='option-card-custom-oauth' sx={{ p: { xs: 2, sm: 3 }, minWidth: 0 }}>
      <Stack direction='row' sx={{ alignItems: 'center', justifyContent: 'space-between', gap: 1, mb: 0.5, flexWrap: 'wrap' }}>
        <Typography variant='h6' component='h2'>{title}</Typography>
        <Button variant='contained' size='small' startIcon={<AddIcon />} onClick={() => { setEditing('new') }}>{t('customOAuth.card.add')}</Button>
      </Stack>
      <Typography variant='body2' color='text.secondary' sx={{ mb: 2, overflowWrap: 'anywhere' }}>{t('customOAuth.card.help', { url: `${base}/oauth/<slug>` })}</Typography>
      {error !== undefined && <Alert severity='error' action={<Button color='inherit' size='small' onClick={load}>{t('common.refresh')}</Button>}>{t('customOAuth.card.loadFailed', { message: error })}</Alert>}
      {providers === undefined && error === undefined && <CircularProgress size={24} />}
      {providers?.length === 0 && <Typography color='text.secondary'>{t('customOAuth.card.empty')}</Typography>}
      {providers !== undefined && providers.length > 0 && (
        <Stack divider={<Divider flexItem />} sx={{ gap: 1 }}>
          {providers.map((p) => (
            <Stack key={p.id} direction='row' data-testid={`oauth-provider-${p.slug}`} sx={{ alignItems: 'center', gap: 1, flexWrap: 'wrap' }}>
              <Box sx={{ minWidth: 0, flex: '1 1 200px' }}>
                <Typography sx={{ overflowWrap: 'anywhere' }}>{p.name}</Typography>
                <Typography variant='body2' color='text.secondary' sx={{ overflowWrap: 'anywhere' }}>{`${base}/oauth/${p.slug}`}</Typography>
              </Box>
              <Stack direction='row' sx={{ gap: 1, flexWrap: 'wrap', alignItems: 'center' }}>
                <Chip size='small' variant='outlined' label={t(p.kind === 'oidc' ? 'customOAuth.card.oidc' : 'customOAuth.card.oauth2')} />
                <Chip size='small' color={p.enabled ? 'success' : 'default'} label={t(p.enabled ? 'customOAuth.card.enabled' : 'customOAuth.card.disabled')} />
                <Button size='small' onClick={() => { setEditing(p) }}>{t('customOAuth.card.edit')}</Button>
                <Button size='small' color='error' onClick={() => { void remove(p) }}>{t('customOAuth.card.delete')}</Button>
              </Stack>
            </Stack>
          ))}
        </Stack>
      )}
      {editing !== undefined && (
        <ProviderDrawer
          key={editing === 'new' ? 'new' : editing.id}
          provider={editing === 'new' ? undefined : editing}
          callbackBase={base}
          onClose={() => { setEditing(undefined) }}
          onSaved={saved}
        />
      )}
      {confirmDialog}
    </Paper>
  )
}
