import Box from '@mui/material/Box'
import CircularProgress from '@mui/material/CircularProgress'
import Tab from '@mui/material/Tab'
import Tabs from '@mui/material/Tabs'
import { lazy, Suspense } from 'react'
import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router-dom'
import { isRoot, useAuth } from '../../auth/AuthContext'
import PersonalSetting from './PersonalSetting'

// The super admin's tabs are large option forms that most users never load.
const OperationSetting = lazy(async () => await import('./OperationSetting'))
const SystemSetting = lazy(async () => await import('./SystemSetting'))
const OtherSetting = lazy(async () => await import('./OtherSetting'))

const TABS = ['personal', 'operation', 'system', 'other'] as const
type TabName = typeof TABS[number]

/** Settings, tab chosen by ?tab=: personal for everyone (default); operation, system and other for the super admin. */
export default function SettingPage () {
  const { t } = useTranslation()
  const { user } = useAuth()
  const [params, setParams] = useSearchParams()
  const root = isRoot(user)
  const allowed: readonly TabName[] = root ? TABS : ['personal']
  const asked = params.get('tab')
  const tab: TabName = allowed.find((name) => name === asked) ?? 'personal'
  const labels: Record<TabName, string> = {
    personal: t('setting.tabs.personal'),
    operation: t('setting.tabs.operation'),
    system: t('setting.tabs.system'),
    other: t('setting.tabs.other')
  }
  return (
    <Box sx={{ minWidth: 0 }}>
      {allowed.length > 1 && (
        <Tabs
          value={tab}
          onChange={(_e, value: TabName) => { setParams(value === 'personal' ? {} : { tab: value }) }}
          variant='scrollable'
          allowScrollButtonsMobile
          sx={{ mb: 2, borderBottom: 1, borderColor: 'divider' }}
        >
          {allowed.map((name) => <Tab key={name} value={name} label={labels[name]} />)}
        </Tabs>
      )}
      <Suspense fallback={<CircularProgress sx={{ m: 4 }} />}>
        {tab === 'personal' && <PersonalSetting />}
        {tab === 'operation' && <OperationSetting />}
        {tab === 'system' && <SystemSetting />}
        {tab === 'other' && <OtherSetting />}
      </Suspense>
    </Box>
  )
}
