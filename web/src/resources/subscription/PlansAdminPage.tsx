import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import Typography from '@mui/material/Typography'
import AddIcon from '@mui/icons-material/Add'
import EditIcon from '@mui/icons-material/EditOutlined'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { RowAction } from '../../components/columns'
import { PagedTable } from '../../components/PagedTable'
import { PageTitle } from '../../components/PageTitle'
import type { Column } from '../../lib/columns'
import { useAction } from '../../lib/useAction'
import { useDrawer } from '../../lib/useDrawer'
import { useLoad } from '../../lib/useLoad'
import { usePageSize } from '../../lib/usePersistentState'
import { listPlans, setPlanEnabled } from './api'
import { durationText, itemText, priceText } from './format'
import { PlanDrawer } from './PlanDrawer'
import type { PlanEntry } from './types'

const COLUMNS: Column[] = [
  { label: 'subscription.admin.col.id', from: 'sm' },
  { label: 'subscription.admin.col.title' },
  { label: 'subscription.admin.col.price', nowrap: true },
  { label: 'subscription.admin.col.duration', nowrap: true },
  { label: 'subscription.admin.col.items' },
  { label: 'subscription.admin.col.enabled', nowrap: true },
  { label: 'subscription.admin.col.sort', nowrap: true },
  { label: 'subscription.admin.col.actions', nowrap: true, sticky: true }
]

/** Items shown in a row; the rest are counted. */
const ROW_ITEMS = 2

/** The subscription plans (admins): the list, enabling and disabling, and the create/edit drawer. */
export default function PlansAdminPage () {
  const { t } = useTranslation()
  const { data: entries, setData, loading, reload } = useLoad(listPlans, { initial: [] })
  const [page, setPage] = useState(1)
  const [size, setSize] = usePageSize('subscription-plans')
  const { act } = useAction(reload)
  const drawer = useDrawer(reload)
  const pages = Math.max(1, Math.ceil(entries.length / size))
  const pageNow = Math.min(page, pages)
  const shown = entries.slice((pageNow - 1) * size, pageNow * size)

  const toggle = async (entry: PlanEntry, enabled: boolean) => {
    // Shown at once; a refusal reloads the list as the server has it.
    setData((list) => list.map((x) => x.plan.id === entry.plan.id ? { ...x, plan: { ...x.plan, enabled } } : x))
    await act(async () => await setPlanEnabled(entry.plan.id, enabled), {
      done: enabled ? t('subscription.admin.enabled') : t('subscription.admin.disabled'),
      reload: 'failed'
    })
  }

  return (
    <Stack spacing={2}>
      <PageTitle title={t('subscription.admin.title')} intro={t('subscription.admin.intro')} />
      <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
        <Button variant='contained' startIcon={<AddIcon />} onClick={drawer.openNew}>{t('subscription.admin.add')}</Button>
      </Stack>
      <PagedTable
        testId='subscription-plans'
        ariaLabel={t('subscription.admin.title')}
        loading={loading}
        columns={COLUMNS}
        empty={entries.length === 0 && !loading}
        emptyText={t('subscription.admin.empty')}
        paging={{ total: entries.length, page: pageNow, size, onPage: setPage, onSize: setSize }}
      >
        {shown.map((entry) => (
          <PlanRow key={entry.plan.id} entry={entry} onToggle={(on) => { void toggle(entry, on) }} onEdit={() => { drawer.openFor(entry.plan.id) }} />
        ))}
      </PagedTable>
      <PlanDrawer
        open={drawer.open}
        entry={drawer.id === undefined ? undefined : entries.find((x) => x.plan.id === drawer.id)}
        onClose={drawer.close}
        onSaved={drawer.saved}
      />
    </Stack>
  )
}

function PlanRow ({ entry, onToggle, onEdit }: { entry: PlanEntry, onToggle: (enabled: boolean) => void, onEdit: () => void }) {
  const { t, i18n } = useTranslation()
  const { status } = useStatus()
  const { plan, items } = entry
  return (
    <TableRow hover data-testid={`plan-row-${plan.id}`}>
      <TableCell>{plan.id}</TableCell>
      <TableCell sx={{ minWidth: 120, maxWidth: 240, overflowWrap: 'anywhere' }}>
        <Typography variant='body2' sx={{ fontWeight: 500 }}>{plan.title}</Typography>
        {plan.subtitle !== '' && <Typography variant='caption' color='text.secondary'>{plan.subtitle}</Typography>}
      </TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }} data-testid='plan-price'>{priceText(plan.price_amount, plan.currency, i18n.language)}</TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{durationText(plan, t)}</TableCell>
      <TableCell sx={{ minWidth: 160 }}>
        <Stack direction='row' useFlexGap sx={{ gap: 0.5, flexWrap: 'wrap' }} data-testid='plan-items'>
          {items.slice(0, ROW_ITEMS).map((item) => <Chip key={`${item.model_name}-${item.quota_type}`} size='small' variant='outlined' label={itemText(item, status, t)} />)}
          {items.length > ROW_ITEMS && <Chip size='small' label={t('subscription.admin.more', { n: items.length - ROW_ITEMS })} title={items.slice(ROW_ITEMS).map((x) => itemText(x, status, t)).join('\n')} />}
        </Stack>
      </TableCell>
      <TableCell>
        <Switch
          size='small' checked={plan.enabled} onChange={(e) => { onToggle(e.target.checked) }}
          slotProps={{ input: { 'aria-label': t('subscription.admin.enabledLabel', { title: plan.title }) } }}
        />
      </TableCell>
      <TableCell>{plan.sort_order}</TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>
        <RowAction label={t('subscription.admin.edit', { title: plan.title })} onClick={onEdit}><EditIcon fontSize='small' /></RowAction>
      </TableCell>
    </TableRow>
  )
}
