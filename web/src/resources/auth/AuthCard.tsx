import Box from '@mui/material/Box'
import Paper from '@mui/material/Paper'
import Typography from '@mui/material/Typography'
import type { ReactNode } from 'react'

/** The centred card every sign-in screen sits in; the full width on small screens. */
export function AuthCard ({ title, children }: { title: string, children: ReactNode }) {
  return (
    <Box sx={{ display: 'flex', justifyContent: 'center', py: { xs: 1, sm: 4 } }}>
      <Paper sx={{ p: { xs: 2, sm: 4 }, width: '100%', maxWidth: 440 }}>
        <Typography variant='h5' component='h1' gutterBottom>{title}</Typography>
        {children}
      </Paper>
    </Box>
  )
}
