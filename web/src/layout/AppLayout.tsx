import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Divider from '@mui/material/Divider'
import Drawer from '@mui/material/Drawer'
import IconButton from '@mui/material/IconButton'
import List from '@mui/material/List'
import ListItemButton from '@mui/material/ListItemButton'
import ListItemText from '@mui/material/ListItemText'
import Menu from '@mui/material/Menu'
import MenuItem from '@mui/material/MenuItem'
import AppBar from '@mui/material/AppBar'
import Toolbar from '@mui/material/Toolbar'
import Typography from '@mui/material/Typography'
import useMediaQuery from '@mui/material/useMediaQuery'
import MenuIcon from '@mui/icons-material/Menu'
import DarkModeIcon from '@mui/icons-material/DarkModeOutlined'
import LightModeIcon from '@mui/icons-material/LightModeOutlined'
import SettingsBrightnessIcon from '@mui/icons-material/SettingsBrightnessOutlined'
import AccountCircleIcon from '@mui/icons-material/AccountCircleOutlined'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link as RouterLink, Outlet, useLocation, useNavigate } from 'react-router-dom'
import { useStatus } from '../api/useStatus'
import { useAuth } from '../auth/AuthContext'
import { Html, isImageSource } from '../components/Html'
import { usePersistentState } from '../lib/usePersistentState'
import { DefaultPasswordDialog } from '../resources/auth/DefaultPasswordDialog'
import type { ThemeChoice } from '../theme'
import { chatEntries, NAV } from './nav'

export const SIDEBAR_WIDTH = 200

export interface AppLayoutProps {
  themeChoice: ThemeChoice
  onThemeChoice: (choice: ThemeChoice) => void
}

/** Top bar, sidebar (signed-in users), page body and footer. Small screens are 600 px wide or less. */
export function AppLayout ({ themeChoice, onThemeChoice }: AppLayoutProps) {
  const { t, i18n } = useTranslation()
  const { status } = useStatus()
  const { user, signOut } = useAuth()
  const navigate = useNavigate()
  const location = useLocation()
  const small = useMediaQuery('(max-width:600px)')
  const [collapsed, setCollapsed] = usePersistentState<boolean>('sidebar-collapsed', status?.default_collapse_sidebar === true)
  const [mobileOpen, setMobileOpen] = useState(false)
  const [themeAnchor, setThemeAnchor] = useState<HTMLElement | null>(null)
  const [userAnchor, setUserAnchor] = useState<HTMLElement | null>(null)
  const name = status?.system_name !== undefined && status.system_name !== '' ? status.system_name : 'ModelGate'
  const showSidebar = user !== undefined
  const sidebarOpen = small ? mobileOpen : !collapsed

  const entries = NAV.filter((e) => (user?.role ?? 0) >= e.role && (e.when?.(status) ?? true))
  const chats = chatEntries(status?.chats)
  const go = (to: string) => {
    navigate(to)
    if (small) setMobileOpen(false)
  }
  const sidebar = (
    <Box component='nav' aria-label={t('nav.console')} sx={{ width: SIDEBAR_WIDTH }}>
      <Toolbar />
      <List dense>
        {entries.map((e) => (
          <ListItemButton key={e.to} selected={location.pathname.startsWith(e.to)} onClick={() => { go(e.to) }}>
            <ListItemText primary={t(e.label)} />
          </ListItemButton>
        ))}
        {chats.length > 0 && <Divider />}
        {chats.map((c, i) => (
          <ListItemButton key={`chat-${i}`} selected={location.pathname === `/chat/${i}`} onClick={() => { go(`/chat/${i}`) }}>
            <ListItemText primary={c.name} />
          </ListItemButton>
        ))}
      </List>
    </Box>
  )
  const ThemeIcon = themeChoice === 'dark' ? DarkModeIcon : themeChoice === 'light' ? LightModeIcon : SettingsBrightnessIcon
  return (
    <Box sx={{ minHeight: '100vh', display: 'flex', flexDirection: 'column' }}>
      <AppBar position='fixed' color='default' elevation={1} sx={{ zIndex: (theme) => theme.zIndex.drawer + 1 }}>
        <Toolbar sx={{ gap: 0.5, minHeight: 56 }} variant='dense'>
          {showSidebar && (
            <IconButton edge='start' aria-label={t('nav.menu')} onClick={() => { if (small) setMobileOpen(!mobileOpen); else setCollapsed(!collapsed) }}>
              <MenuIcon />
            </IconButton>
          )}
          {status?.logo !== undefined && isImageSource(status.logo) && (
            <Box component='img' src={status.logo} alt='' sx={{ height: 28, width: 28, objectFit: 'contain' }} />
          )}
          <Typography variant='h6' component={RouterLink} to='/' noWrap sx={{ color: 'inherit', textDecoration: 'none', mr: 1, maxWidth: small ? 120 : 240 }}>
            {name}
          </Typography>
          {!small && <Button component={RouterLink} to='/'>{t('nav.home')}</Button>}
          {!small && user !== undefined && <Button component={RouterLink} to='/token'>{t('nav.console')}</Button>}
          {!small && <Button component={RouterLink} to='/pricing'>{t('nav.pricing')}</Button>}
          {!small && <Button component={RouterLink} to='/about'>{t('nav.about')}</Button>}
          <Box sx={{ flexGrow: 1 }} />
          <IconButton aria-label={t('theme.choose')} onClick={(e) => { setThemeAnchor(e.currentTarget) }}><ThemeIcon /></IconButton>
          <Menu anchorEl={themeAnchor} open={themeAnchor !== null} onClose={() => { setThemeAnchor(null) }}>
            {(['light', 'dark', 'system'] as const).map((c) => (
              <MenuItem key={c} selected={c === themeChoice} onClick={() => { onThemeChoice(c); setThemeAnchor(null) }}>{t(`theme.${c}`)}</MenuItem>
            ))}
          </Menu>
          <Button size='small' aria-label={t('language.choose')} onClick={() => { void i18n.changeLanguage(i18n.language === 'en' ? 'zh' : 'en') }}>
            {t('language.switch')}
          </Button>
          {user === undefined
            ? (
              <>
                <Button size='small' variant='contained' component={RouterLink} to='/login'>{t('nav.login')}</Button>
                {!small && <Button size='small' component={RouterLink} to='/register'>{t('nav.register')}</Button>}
              </>
              )
            : (
              <>
                <Button size='small' startIcon={<AccountCircleIcon />} onClick={(e) => { setUserAnchor(e.currentTarget) }} sx={{ textTransform: 'none', maxWidth: 160 }}>
                  <Box component='span' sx={{ overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }}>{user.display_name !== '' ? user.display_name : user.username}</Box>
                </Button>
                <Menu anchorEl={userAnchor} open={userAnchor !== null} onClose={() => { setUserAnchor(null) }}>
                  <MenuItem onClick={() => { setUserAnchor(null); navigate('/setting') }}>{t('nav.personal')}</MenuItem>
                  <MenuItem onClick={() => { setUserAnchor(null); void signOut().then(() => { navigate('/login') }) }}>{t('nav.logout')}</MenuItem>
                </Menu>
              </>
              )}
        </Toolbar>
      </AppBar>
      <Box sx={{ display: 'flex', flexGrow: 1 }}>
        {showSidebar && (
          <Drawer
            variant={small ? 'temporary' : 'persistent'}
            open={sidebarOpen}
            onClose={() => { setMobileOpen(false) }}
            sx={{ width: sidebarOpen && !small ? SIDEBAR_WIDTH : 0, flexShrink: 0, '& .MuiDrawer-paper': { width: SIDEBAR_WIDTH, boxSizing: 'border-box' } }}
          >
            {sidebar}
          </Drawer>
        )}
        <Box sx={{ flexGrow: 1, minWidth: 0, display: 'flex', flexDirection: 'column' }}>
          <Toolbar variant='dense' sx={{ minHeight: 56 }} />
          <Box component='main' sx={{ flexGrow: 1, p: small ? 1.5 : 3, minWidth: 0 }}>
            {user?.password_is_default === true && (
              <Alert
                severity='warning'
                data-testid='default-password-banner'
                sx={{ mb: 2, flexWrap: 'wrap' }}
                action={<Button color='inherit' size='small' component={RouterLink} to='/setting'>{t('auth.defaultPassword.change')}</Button>}
              >
                {t('auth.defaultPassword.banner')}
              </Alert>
            )}
            <Outlet />
            <DefaultPasswordDialog />
          </Box>
          <Box component='footer' sx={{ py: 2, px: 2, textAlign: 'center', color: 'text.secondary', fontSize: 14 }}>
            {status?.footer_html !== undefined && status.footer_html !== ''
              ? <Html html={status.footer_html} />
              : <>{name} {status?.version === undefined ? '' : `v${status.version}`}</>}
          </Box>
        </Box>
      </Box>
    </Box>
  )
}
