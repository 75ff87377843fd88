import { createTheme } from '@mui/material/styles'

export function buildTheme (mode: 'light' | 'dark') {
  return createTheme({
    palette: { mode, primary: { main: '#2563eb' } },
    shape: { borderRadius: 8 }
  })
}
