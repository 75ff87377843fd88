import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Drawer from '@mui/material/Drawer'
import IconButton from '@mui/material/IconButton'
import LinearProgress from '@mui/material/LinearProgress'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import CloseIcon from '@mui/icons-material/Close'
import type { FormEvent, ReactNode } from 'react'
import { useTranslation } from 'react-i18next'

export interface FormDrawerProps {
  open: boolean
  /** The heading, also the form's accessible name. */
  title: string
  /** Pixels on wider screens; 600 px wide or less, the drawer takes the whole width. */
  width: number
  onClose: () => void
  onSubmit: (e: FormEvent) => void | Promise<void>
  /** Something is loading: a progress bar shows and saving waits. */
  loading?: boolean
  /**
   * The record being edited has not loaded yet: the fields stay hidden, so nobody reads or types
   * into an empty form that the load is about to overwrite.
   */
  waiting?: boolean
  saving: boolean
  submitLabel: string
  children: ReactNode
}

/** A side drawer holding a form: a title with a close button, the fields, and cancel/submit. */
export function FormDrawer ({ open, title, width, onClose, onSubmit, loading = false, waiting = false, saving, submitLabel, children }: FormDrawerProps) {
  const { t } = useTranslation()
  return (
    <Drawer
      anchor='right'
      open={open}
      onClose={onClose}
      // Above the app bar (which sits over the sidebar drawer), so the title and close button show.
      sx={{ zIndex: (theme) => theme.zIndex.modal }}
      slotProps={{ paper: { sx: { width, maxWidth: '100%', '@media (max-width:600px)': { width: '100%' } } } }}
    >
      <Box component='form' noValidate aria-label={title} onSubmit={(e) => { void onSubmit(e) }} sx={{ display: 'flex', flexDirection: 'column', height: '100%' }}>
        <Stack direction='row' sx={{ alignItems: 'center', px: 2, py: 1.5, borderBottom: 1, borderColor: 'divider' }}>
          <Typography variant='h6' component='h2' sx={{ flexGrow: 1 }}>{title}</Typography>
          <IconButton aria-label={t('common.close')} onClick={onClose}><CloseIcon /></IconButton>
        </Stack>
        {(loading || waiting) && <LinearProgress />}
        <Stack spacing={2.5} sx={{ p: 2, overflowY: 'auto', flexGrow: 1, visibility: waiting ? 'hidden' : undefined }}>{children}</Stack>
        <Stack direction='row' spacing={1} sx={{ justifyContent: 'flex-end', px: 2, py: 1.5, borderTop: 1, borderColor: 'divider' }}>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type='submit' variant='contained' disabled={saving || loading || waiting}>{submitLabel}</Button>
        </Stack>
      </Box>
    </Drawer>
  )
}
