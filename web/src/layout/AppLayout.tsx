import type { StatusData } from '@modelgate/contracts'
import AppBar from '@mui/material/AppBar'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Container from '@mui/material/Container'
import Toolbar from '@mui/material/Toolbar'
import Typography from '@mui/material/Typography'
import useMediaQuery from '@mui/material/useMediaQuery'
import { useTranslation } from 'react-i18next'
import { Link as RouterLink, Outlet } from 'react-router-dom'

export interface AppLayoutProps {
  status: StatusData | undefined
  mode: 'light' | 'dark'
  onToggleMode: () => void
}

/** Top bar, page body and footer. A small screen is 600 px wide or less (SPEC.md section 2). */
export function AppLayout ({ status, mode, onToggleMode }: AppLayoutProps) {
  const { t, i18n } = useTranslation()
  const small = useMediaQuery('(max-width:600px)')
  const name = status?.system_name ?? 'ModelGate'
  return (
    <Box sx={{ minHeight: '100vh', display: 'flex', flexDirection: 'column' }}>
      <AppBar position='sticky' color='default' elevation={1}>
        <Toolbar sx={{ gap: 1, flexWrap: 'wrap' }}>
          {status?.logo !== undefined && status.logo !== '' && (
            <Box component='img' src={status.logo} alt='' sx={{ height: 28, width: 28 }} />
          )}
          <Typography variant='h6' component={RouterLink} to='/' sx={{ color: 'inherit', textDecoration: 'none', mr: 2 }}>
            {name}
          </Typography>
          {!small && <Button component={RouterLink} to='/'>{t('nav.home')}</Button>}
          <Box sx={{ flexGrow: 1 }} />
          <Button size='small' onClick={onToggleMode} aria-label={mode === 'dark' ? t('theme.light') : t('theme.dark')}>
            {mode === 'dark' ? '☀' : '☾'}
          </Button>
          <Button size='small' onClick={() => { void i18n.changeLanguage(i18n.language === 'en' ? 'zh' : 'en') }}>
            {t('language.switch')}
          </Button>
        </Toolbar>
      </AppBar>
      <Container component='main' sx={{ flexGrow: 1, py: 4 }}>
        <Outlet />
      </Container>
      <Box component='footer' sx={{ py: 2, textAlign: 'center', color: 'text.secondary', fontSize: 14 }}>
        {name} {status?.version === undefined ? '' : `v${status.version}`}
      </Box>
    </Box>
  )
}
