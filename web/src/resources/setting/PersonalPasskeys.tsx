import type { PasskeyView } from '@modelgate/contracts'
import { PASSKEY_NAME_MAX } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import CircularProgress from '@mui/material/CircularProgress'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogContentText from '@mui/material/DialogContentText'
import DialogTitle from '@mui/material/DialogTitle'
import Divider from '@mui/material/Divider'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import KeyIcon from '@mui/icons-material/KeyOutlined'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useConfirm } from '../../components/Confirm'
import { useNotify } from '../../components/Notify'
import { useVerification } from '../../components/VerifyDialog'
import { formatTime } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { deletePasskey, listPasskeys, renamePasskey } from '../passkey/api'
import { addPasskey, passkeysSupported } from '../passkey/ceremony'
import { PersonalCard } from './PersonalCard'

/** Asks for a passkey's name, then runs `action` with it; a refusal shows in the dialog. */
function NameDialog ({ open, title, help, initial, confirm, onClose, action }: {
  open: boolean
  title: string
  help?: string
  initial: string
  confirm: string
  onClose: () => void
  action: (name: string) => Promise<void>
}) {
  const { t } = useTranslation()
  const [name, setName] = useState(initial)
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  useEffect(() => { if (open) { setName(initial); setError(undefined); setBusy(false) } }, [open, initial])
  const submit = (e: FormEvent) => {
    e.preventDefault()
    setBusy(true)
    setError(undefined)
    action(name.trim()).then(() => { setBusy(false) }, (err: unknown) => {
      setBusy(false)
      setError(err instanceof Error ? err.message : String(err))
    })
  }
  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth='xs' aria-labelledby='passkey-name-title' data-testid='passkey-name-dialog'>
      <Box component='form' onSubmit={submit} noValidate>
        <DialogTitle id='passkey-name-title'>{title}</DialogTitle>
        <DialogContent>
          {help !== undefined && <DialogContentText sx={{ mb: 2 }}>{help}</DialogContentText>}
          <TextField
            label={t('passkey.name')} placeholder={t('passkey.namePlaceholder')} value={name} autoFocus fullWidth
            onChange={(e) => { setName(e.target.value); setError(undefined) }}
            slotProps={{ htmlInput: { maxLength: PASSKEY_NAME_MAX, 'data-testid': 'passkey-name' } }}
          />
          {error !== undefined && <Alert severity='error' role='alert' sx={{ mt: 2 }} data-testid='passkey-name-error'>{error}</Alert>}
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type='submit' variant='contained' disabled={busy}>{confirm}</Button>
        </DialogActions>
      </Box>
    </Dialog>
  )
}

/**
 * The caller's passkeys: the list (name, added, last used, synced), adding one (after a fresh
 * verification when the server asks for it), renaming, and removing (always behind a fresh
 * verification, which a passkey itself may give).
 */
export function PersonalPasskeys () {
  const { t } = useTranslation()
  const notify = useNotify()
  const { withVerification } = useVerification()
  const [confirm, confirmDialog] = useConfirm()
  const { data: list, error, reload } = useLoad(listPasskeys)
  const failed = error !== undefined
  const [dialog, setDialog] = useState<{ kind: 'add' } | { kind: 'rename', passkey: PasskeyView } | undefined>()
  const { act, busy } = useAction(reload)
  const supported = passkeysSupported()

  const add = async (name: string) => {
    await addPasskey(name, withVerification)
    setDialog(undefined)
    notify.success(t('passkey.added'))
    reload()
  }
  const rename = async (passkey: PasskeyView, name: string) => {
    if (name === '') throw new Error(t('passkey.errors.nameRequired'))
    await renamePasskey(passkey.id, name)
    setDialog(undefined)
    notify.success(t('passkey.renamed'))
    reload()
  }
  const remove = async (passkey: PasskeyView) => {
    const ok = await confirm({ title: t('passkey.removeTitle'), body: t('passkey.removeBody', { name: passkey.name }), action: t('passkey.remove'), danger: true })
    if (!ok) return
    await act(async () => { await withVerification(async () => { await deletePasskey(passkey.id) }) }, { done: t('passkey.removed'), reload: 'always' })
  }

  const canAdd = list?.available === true && supported
  return (
    <PersonalCard
      title={t('passkey.title')}
      testId='personal-passkeys'
      action={<Button size='small' variant='contained' startIcon={<KeyIcon />} disabled={!canAdd || busy} onClick={() => { setDialog({ kind: 'add' }) }} data-testid='passkey-add'>{t('passkey.add')}</Button>}
    >
      <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>{t('passkey.intro')}</Typography>
      {failed && <Alert severity='error'>{t('passkey.loadFailed')}</Alert>}
      {list === undefined && !failed && <CircularProgress size={24} />}
      {list !== undefined && !list.available && <Alert severity='info' sx={{ mb: 2 }}>{t('passkey.unavailable')}</Alert>}
      {list !== undefined && list.available && !supported && <Alert severity='warning' sx={{ mb: 2 }}>{t('passkey.unsupported')}</Alert>}
      {list !== undefined && list.items.length === 0 && <Typography variant='body2' data-testid='passkey-empty'>{t('passkey.empty')}</Typography>}
      {list !== undefined && list.items.length > 0 && (
        <Stack divider={<Divider flexItem />} sx={{ gap: 1.5 }}>
          {list.items.map((p) => (
            <Stack
              key={p.id}
              data-testid='passkey-row'
              direction={{ xs: 'column', sm: 'row' }}
              sx={{ gap: { xs: 1, sm: 2 }, alignItems: { xs: 'stretch', sm: 'center' }, minWidth: 0 }}
            >
              <KeyIcon color='action' sx={{ display: { xs: 'none', sm: 'block' } }} />
              <Box sx={{ flex: 1, minWidth: 0 }}>
                <Stack direction='row' sx={{ alignItems: 'center', gap: 1, flexWrap: 'wrap' }}>
                  <Typography variant='subtitle2' component='p' sx={{ overflowWrap: 'anywhere' }} data-testid='passkey-name-text'>{p.name}</Typography>
                  {p.backed_up && <Chip size='small' variant='outlined' color='info' label={t('passkey.synced')} />}
                </Stack>
                <Typography variant='body2' color='text.secondary' sx={{ overflowWrap: 'anywhere' }}>
                  {t('passkey.details', { created: formatTime(p.created_at), used: p.last_used_at === null ? t('passkey.neverUsed') : t('passkey.lastUsed', { time: formatTime(p.last_used_at) }) })}
                </Typography>
              </Box>
              <Stack direction='row' sx={{ gap: 1, flexShrink: 0, alignSelf: { xs: 'flex-start', sm: 'center' } }}>
                <Button size='small' variant='outlined' disabled={busy} aria-label={t('passkey.renameNamed', { name: p.name })} onClick={() => { setDialog({ kind: 'rename', passkey: p }) }}>
                  {t('passkey.rename')}
                </Button>
                <Button size='small' variant='outlined' color='error' disabled={busy} aria-label={t('passkey.removeNamed', { name: p.name })} onClick={() => { void remove(p) }}>
                  {t('passkey.remove')}
                </Button>
              </Stack>
            </Stack>
          ))}
        </Stack>
      )}
      <NameDialog
        open={dialog?.kind === 'add'} title={t('passkey.addTitle')} help={t('passkey.addHelp')} initial='' confirm={t('passkey.continue')}
        onClose={() => { setDialog(undefined) }} action={add}
      />
      <NameDialog
        open={dialog?.kind === 'rename'} title={t('passkey.renameTitle')} initial={dialog?.kind === 'rename' ? dialog.passkey.name : ''} confirm={t('common.save')}
        onClose={() => { setDialog(undefined) }} action={async (name) => { if (dialog?.kind === 'rename') await rename(dialog.passkey, name) }}
      />
      {confirmDialog}
    </PersonalCard>
  )
}
