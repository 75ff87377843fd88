import CircularProgress from '@mui/material/CircularProgress'
import CssBaseline from '@mui/material/CssBaseline'
import { ThemeProvider } from '@mui/material/styles'
import useMediaQuery from '@mui/material/useMediaQuery'
import { Suspense, useMemo } from 'react'
import { BrowserRouter, Route, Routes } from 'react-router-dom'
import { StatusContext, useStatusLoader } from './api/useStatus'
import { AuthProvider } from './auth/AuthContext'
import { RequireAuth } from './auth/RequireAuth'
import { NotifyProvider } from './components/Notify'
import { VerificationProvider } from './components/VerifyDialog'
import { AppLayout } from './layout/AppLayout'
import { usePersistentState } from './lib/usePersistentState'
import { NotFoundPage } from './resources/home/NotFoundPage'
import { SetupGate } from './resources/setup/SetupGate'
import { PUBLIC, ROUTES } from './routes'
import { buildTheme, type ThemeChoice } from './theme'

export function App () {
  const statusState = useStatusLoader()
  const [choice, setChoice] = usePersistentState<ThemeChoice>('theme-mode', 'system')
  const prefersDark = useMediaQuery('(prefers-color-scheme: dark)')
  const mode = choice === 'system' ? (prefersDark ? 'dark' : 'light') : choice
  const theme = useMemo(() => buildTheme(mode), [mode])
  return (
    <ThemeProvider theme={theme}>
      <CssBaseline />
      <StatusContext.Provider value={statusState}>
        <BrowserRouter>
          <NotifyProvider>
            <AuthProvider>
              <VerificationProvider>
              <SetupGate />
              <Routes>
                <Route element={<AppLayout themeChoice={choice} onThemeChoice={setChoice} />}>
                  {ROUTES.map(({ path, role, page: Page }) => (
                    <Route
                      key={path}
                      path={path}
                      element={
                        <Suspense fallback={<CircularProgress sx={{ m: 4 }} />}>
                          {role === PUBLIC ? <Page /> : <RequireAuth role={role}><Page /></RequireAuth>}
                        </Suspense>
                      }
                    />
                  ))}
                  <Route path='*' element={<NotFoundPage />} />
                </Route>
              </Routes>
              </VerificationProvider>
            </AuthProvider>
          </NotifyProvider>
        </BrowserRouter>
      </StatusContext.Provider>
    </ThemeProvider>
  )
}
