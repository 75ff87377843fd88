import Box from '@mui/material/Box'
import Typography from '@mui/material/Typography'

/** A labelled figure of the wallet (balance, a sum to pay). */
export function Figure ({ label, value, testId }: { label: string, value: string, testId?: string }) {
  return (
    <Box sx={{ minWidth: 0 }}>
      <Typography variant='body2' color='text.secondary'>{label}</Typography>
      <Typography variant='h5' data-testid={testId} sx={{ overflowWrap: 'anywhere' }}>{value}</Typography>
    </Box>
  )
}
