import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogContentText from '@mui/material/DialogContentText'
import DialogTitle from '@mui/material/DialogTitle'
import { type ReactNode, useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'

export interface ConfirmRequest {
  title: string
  body: string
  /** The confirming button's label (default: confirm). */
  action?: string
  /** The action destroys or locks something out: the confirming button is red. */
  danger?: boolean
}

/** `confirm(request)` resolves true when the user confirms; render `dialog` once in the component. */
export function useConfirm (): [(request: ConfirmRequest) => Promise<boolean>, ReactNode] {
  const { t } = useTranslation()
  const [pending, setPending] = useState<ConfirmRequest & { resolve: (ok: boolean) => void }>()
  const confirm = useCallback(async (request: ConfirmRequest) => await new Promise<boolean>((resolve) => { setPending({ ...request, resolve }) }), [])
  const close = (ok: boolean) => {
    pending?.resolve(ok)
    setPending(undefined)
  }
  const dialog = (
    <Dialog open={pending !== undefined} onClose={() => { close(false) }} aria-labelledby='confirm-title' fullWidth maxWidth='xs'>
      <DialogTitle id='confirm-title'>{pending?.title}</DialogTitle>
      <DialogContent><DialogContentText>{pending?.body}</DialogContentText></DialogContent>
      <DialogActions>
        <Button onClick={() => { close(false) }}>{t('common.cancel')}</Button>
        <Button variant='contained' color={pending?.danger === true ? 'error' : 'primary'} onClick={() => { close(true) }}>
          {pending?.action ?? t('common.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  )
  return [confirm, dialog]
}
