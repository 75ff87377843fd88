import Box from '@mui/material/Box'
import Typography from '@mui/material/Typography'

/** A screen's heading with the line under it that says what the screen is for. */
export function PageTitle ({ title, intro }: { title: string, intro: string }) {
  return (
    <Box>
      <Typography variant='h5' component='h1'>{title}</Typography>
      <Typography variant='body2' color='text.secondary'>{intro}</Typography>
    </Box>
  )
}
