import CssBaseline from '@mui/material/CssBaseline'
import { ThemeProvider } from '@mui/material/styles'
import { useMemo, useState } from 'react'
import { BrowserRouter, Route, Routes } from 'react-router-dom'
import { useStatus } from './api/useStatus'
import { AppLayout } from './layout/AppLayout'
import { HomePage } from './resources/home/HomePage'
import { NotFoundPage } from './resources/home/NotFoundPage'
import { buildTheme } from './theme'

const THEME_KEY = 'theme-mode'

export function App () {
  const { status, error } = useStatus()
  const [mode, setMode] = useState<'light' | 'dark'>(() => localStorage.getItem(THEME_KEY) === 'dark' ? 'dark' : 'light')
  const theme = useMemo(() => buildTheme(mode), [mode])
  const toggle = () => {
    const next = mode === 'dark' ? 'light' : 'dark'
    localStorage.setItem(THEME_KEY, next)
    setMode(next)
  }
  return (
    <ThemeProvider theme={theme}>
      <CssBaseline />
      <BrowserRouter>
        <Routes>
          <Route element={<AppLayout status={status} mode={mode} onToggleMode={toggle} />}>
            <Route index element={<HomePage status={status} error={error} />} />
            <Route path='*' element={<NotFoundPage />} />
          </Route>
        </Routes>
      </BrowserRouter>
    </ThemeProvider>
  )
}
