import Alert from '@mui/material/Alert'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import TextField from '@mui/material/TextField'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'

export interface KeyDialogProps {
  /** Closed when undefined. */
  keys: string[] | undefined
  title: string
  hint: string
  copyLabel: string
  onClose: () => void
}

/** Shows full keys (one per line) in a read-only field with a copy button. */
export function KeyDialog ({ keys, title, hint, copyLabel, onClose }: KeyDialogProps) {
  const { t } = useTranslation()
  const notify = useNotify()
  const text = (keys ?? []).join('\n')
  return (
    <Dialog open={keys !== undefined} onClose={onClose} fullWidth maxWidth='sm'>
      <DialogTitle>{title}</DialogTitle>
      <DialogContent>
        <Alert severity='info' sx={{ mb: 2 }}>{hint}</Alert>
        <TextField
          value={text}
          fullWidth
          multiline
          maxRows={12}
          aria-label={title}
          slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'token-keys', style: { fontFamily: 'monospace', wordBreak: 'break-all' } } }}
          onFocus={(e) => { e.target.select() }}
        />
      </DialogContent>
      <DialogActions>
        <Button startIcon={<ContentCopyIcon />} variant='contained' onClick={() => { void notify.copy(text, t('token.keyCopied')) }}>{copyLabel}</Button>
        <Button onClick={onClose}>{t('common.close')}</Button>
      </DialogActions>
    </Dialog>
  )
}
