import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import type { ReactNode } from 'react'

/** One titled section of the personal tab. */
export function PersonalCard ({ title, action, children, testId, wide = false }: { title: string, action?: ReactNode, children: ReactNode, testId?: string, wide?: boolean }) {
  return (
    <Paper component='section' aria-label={title} data-testid={testId} sx={{ p: { xs: 2, sm: 3 }, minWidth: 0, gridColumn: wide ? '1 / -1' : undefined }}>
      <Stack direction='row' sx={{ alignItems: 'center', justifyContent: 'space-between', gap: 1, mb: 2, flexWrap: 'wrap' }}>
        <Typography variant='h6' component='h2'>{title}</Typography>
        {action}
      </Stack>
      {children}
    </Paper>
  )
}

/** A labelled figure (balance, counts). */
export function PersonalStat ({ label, value, testId }: { label: string, value: ReactNode, testId?: string }) {
  return (
    <Stack sx={{ minWidth: 0 }}>
      <Typography variant='body2' color='text.secondary'>{label}</Typography>
      <Typography variant='h6' component='p' data-testid={testId} sx={{ overflowWrap: 'anywhere' }}>{value}</Typography>
    </Stack>
  )
}
