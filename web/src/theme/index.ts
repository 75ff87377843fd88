import { createTheme } from '@mui/material/styles'

/** The theme switch offers light, dark and the system's preference. */
export type ThemeChoice = 'light' | 'dark' | 'system'

export function buildTheme (mode: 'light' | 'dark') {
  return createTheme({
    palette: { mode, primary: { main: mode === 'dark' ? '#60a5fa' : '#2563eb' } },
    shape: { borderRadius: 8 }
  })
}
