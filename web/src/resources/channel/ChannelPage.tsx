import { CHANNEL_STATUS, type ChannelTagRow, type ChannelView } from '@modelgate/contracts'
import Button from '@mui/material/Button'
import CircularProgress from '@mui/material/CircularProgress'
import FormControlLabel from '@mui/material/FormControlLabel'
import MenuItem from '@mui/material/MenuItem'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import TextField from '@mui/material/TextField'
import AddIcon from '@mui/icons-material/Add'
import AttachMoneyIcon from '@mui/icons-material/AttachMoney'
import BuildIcon from '@mui/icons-material/BuildOutlined'
import DeleteSweepIcon from '@mui/icons-material/DeleteSweepOutlined'
import NetworkCheckIcon from '@mui/icons-material/NetworkCheck'
import RefreshIcon from '@mui/icons-material/Refresh'
import SearchIcon from '@mui/icons-material/Search'
import { type Dispatch, type FormEvent, Fragment, type SetStateAction, useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNavigate } from 'react-router-dom'
import { isRoot, useAuth } from '../../auth/AuthContext'
import { useConfirm } from '../../components/Confirm'
import { useNotify } from '../../components/Notify'
import { PageTitle } from '../../components/PageTitle'
import { PagedTable } from '../../components/PagedTable'
import type { Column } from '../../lib/columns'
import { useAction } from '../../lib/useAction'
import { useRouteDrawer } from '../../lib/useDrawer'
import { priceEditorPath } from '../settings-admin/priceLink'
import { useLoad } from '../../lib/useLoad'
import { usePagedList } from '../../lib/usePagedList'
import { usePersistentState } from '../../lib/usePersistentState'
import { useSelection } from '../../lib/useSelection'
import {
  channelTypes,
  copyChannel,
  deleteChannel,
  deleteDisabledChannels,
  editTag,
  fixChannels,
  groupNames,
  isTagRow,
  listChannels,
  patchChannel,
  setTagStatus,
  testAllChannels,
  testChannel,
  updateAllChannelBalances,
  updateChannelBalance
} from './api'
import { formatUsd } from './BalanceCell'
import { ChannelDrawer } from './ChannelDrawer'
import { ChannelRow, TagRow } from './ChannelRow'
import { parseInteger, PRIORITY_MIN } from './form'
import { KeysDialog } from './KeysDialog'
import { TagDialog } from './TagDialog'

interface Filter { keyword: string, model: string, group: string }

// The actions stay in view at the right edge however long the names and tags are.
const COLUMNS: Column[] = ['id', 'name', 'type', 'status', 'group', 'responseTime', 'balance', 'priority', 'weight', 'actions'].map((c) => ({ label: `channel.col.${c}`, sticky: c === 'actions' }))
const NO_TYPES: Record<string, string> = {}

/** Admins: the upstream channels; /channel/add and /channel/edit/{id} open the drawer. */
export default function ChannelPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const [idSort, setIdSort] = usePersistentState<boolean>('id-sort', false)
  const [tagMode, setTagMode] = usePersistentState<boolean>('channel-tag-mode', false)
  const [inputs, setInputs] = useState<Filter>({ keyword: '', model: '', group: '' })
  const [filter, setFilter] = useState<Filter>({ keyword: '', model: '', group: '' })
  const types = useLoad(channelTypes, { initial: NO_TYPES }).data
  const groups = useLoad(groupNames, { initial: [] }).data
  const expanded = useSelection<string>()
  const [testing, setTesting] = useState<Set<number>>(new Set())
  const [balancing, setBalancing] = useState<Set<number>>(new Set())
  const [balancingAll, setBalancingAll] = useState(false)
  const [confirm, confirmDialog] = useConfirm()
  const [tagEditing, setTagEditing] = useState<ChannelTagRow | undefined>()
  const [keysOf, setKeysOf] = useState<ChannelView | undefined>()
  const load = useCallback(async (page: number, size: number) => await listChannels({ page, size, idSort, tagMode, ...filter }), [idSort, tagMode, filter])
  const { items, loading, setPage, reload, paging } = usePagedList(load)
  const { act } = useAction(reload)
  // The drawer follows the address, so /channel/add and /channel/edit/{id} can be opened directly.
  const drawer = useRouteDrawer('/channel', reload)
  const { user } = useAuth()
  const navigate = useNavigate()
  // A saved channel whose models have no price serves none of them: the super admin, who sets
  // prices, is offered the price editor at once, opened on the first of them.
  const saved = async (unpriced: string[]) => {
    drawer.saved()
    if (unpriced.length === 0 || !isRoot(user)) return
    const price = await confirm({
      title: t('channel.priceOffer.title', { count: unpriced.length }),
      body: t('channel.priceOffer.body', { count: unpriced.length, models: unpriced.join(', ') }),
      action: t('channel.priceOffer.action')
    })
    if (price) void navigate(priceEditorPath(unpriced[0]!))
  }

  const typeName = (type: number | null) => type === null ? t('channel.mixed') : types[String(type)] ?? t('channel.unknownType', { type })

  const search = (e: FormEvent) => {
    e.preventDefault()
    setPage(1)
    // A new object even when unchanged: searching again refreshes the list.
    setFilter({ ...inputs })
  }

  /** Runs `work` with the row marked busy in one of the busy sets, then reloads the list. */
  const whileBusy = async (mark: Dispatch<SetStateAction<Set<number>>>, id: number, work: () => Promise<void>) => {
    mark((s) => new Set(s).add(id))
    // A test stores the response time and may change the status; a balance update stores the balance.
    await act(work, { reload: 'always' })
    mark((s) => {
      const next = new Set(s)
      next.delete(id)
      return next
    })
  }

  const test = async (row: ChannelView, model?: string) => {
    await whileBusy(setTesting, row.id, async () => { notify.success((await testChannel(row.id, model)).message) })
  }

  const updateBalance = async (row: ChannelView) => {
    await whileBusy(setBalancing, row.id, async () => {
      notify.success(t('channel.balance.updated', { name: row.name, balance: formatUsd(await updateChannelBalance(row.id)) }))
    })
  }

  const updateAllBalances = async () => {
    setBalancingAll(true)
    await act(async () => {
      const { updated, failed } = await updateAllChannelBalances()
      if (failed === 0) notify.success(t('channel.balance.allUpdated', { updated }))
      else notify.warning(t('channel.balance.allUpdatedFailed', { updated, failed }))
    }, { reload: 'always' })
    setBalancingAll(false)
  }

  const testAll = async () => {
    await act(async () => { notify.info(await testAllChannels()) }, { reload: 'never' })
  }

  const copy = async (row: ChannelView) => {
    // Copied on the server: the console never holds the key (keys are write-only).
    await act(async () => { await copyChannel(row.id, t('channel.copySuffix')) }, {
      done: t('channel.copied'),
      failed: (err) => t('channel.copyFailed', { reason: err instanceof Error ? err.message : String(err) })
    })
  }

  const priorityOf = (text: string): number | undefined => {
    const n = parseInteger(text)
    if (n === undefined || n < PRIORITY_MIN) {
      notify.error(t('channel.form.error.priority'))
      return undefined
    }
    return n
  }

  const setPriority = async (row: ChannelView, text: string): Promise<number | null> => {
    const priority = priorityOf(text)
    if (priority === undefined) return null
    const saved = await act(async () => await patchChannel(row.id, { priority }), { done: t('channel.priorityUpdated') })
    return saved === undefined ? null : saved.priority
  }

  const setWeight = async (row: ChannelView, text: string): Promise<number | null> => {
    const n = parseInteger(text)
    if (n === undefined) {
      notify.error(t('channel.form.error.weight'))
      return null
    }
    // docs/domain.md: a negative weight becomes 0.
    const saved = await act(async () => await patchChannel(row.id, { weight: Math.max(0, n) }), { done: t('channel.weightUpdated') })
    return saved === undefined ? null : saved.weight
  }

  const setTagPriority = async (row: ChannelTagRow, text: string): Promise<number | null> => {
    const priority = priorityOf(text)
    if (priority === undefined) return null
    const done = await act(async () => await editTag({ tag: row.tag, priority }), { done: t('channel.priorityUpdated') })
    return done === undefined ? null : priority
  }

  const setTagWeight = async (row: ChannelTagRow, text: string): Promise<number | null> => {
    const weight = parseInteger(text)
    // docs/domain.md: a tag's bulk weight must be a non-negative integer.
    if (weight === undefined || weight < 0) {
      notify.error(t('channel.tag.weightInvalid'))
      return null
    }
    const done = await act(async () => await editTag({ tag: row.tag, weight }), { done: t('channel.weightUpdated') })
    return done === undefined ? null : weight
  }

  const remove = async (row: ChannelView) => {
    const ok = await confirm({ title: t('channel.deleteTitle'), body: t('channel.deleteBody', { name: row.name }), action: t('common.delete'), danger: true })
    if (ok) await act(async () => { await deleteChannel(row.id) }, { done: t('channel.deleted'), reload: 'always' })
  }

  const deleteDisabled = async () => {
    const ok = await confirm({ title: t('channel.deleteDisabledTitle'), body: t('channel.deleteDisabledBody'), action: t('common.delete'), danger: true })
    if (ok) await act(deleteDisabledChannels, { done: (count) => t('channel.disabledDeleted', { count }), reload: 'always' })
  }

  const channelRow = (row: ChannelView, nested = false) => (
    <ChannelRow
      key={row.id}
      row={row}
      nested={nested}
      typeName={typeName(row.type)}
      testing={testing.has(row.id)}
      onTest={(model) => { void test(row, model) }}
      onToggle={() => {
        const enabling = row.status !== CHANNEL_STATUS.enabled
        void act(async () => await patchChannel(row.id, { status: enabling ? CHANNEL_STATUS.enabled : CHANNEL_STATUS.disabled }), {
          done: enabling ? t('channel.enabled') : t('channel.disabled'),
          reload: 'always'
        })
      }}
      onEdit={() => { drawer.openFor(row.id) }}
      onCopy={() => { void copy(row) }}
      onDelete={() => { void remove(row) }}
      onPriority={async (text) => await setPriority(row, text)}
      onWeight={async (text) => await setWeight(row, text)}
      onKeys={() => { setKeysOf(row) }}
      updatingBalance={balancingAll || balancing.has(row.id)}
      onBalance={() => { void updateBalance(row) }}
    />
  )

  return (
    <Stack spacing={2} sx={{ minWidth: 0 }}>
      <PageTitle title={t('channel.title')} intro={t('channel.intro')} />
      <Stack component='form' role='search' onSubmit={search} direction={{ xs: 'column', md: 'row' }} spacing={1} useFlexGap>
        <TextField size='small' label={t('channel.searchKeyword')} value={inputs.keyword} onChange={(e) => { setInputs((f) => ({ ...f, keyword: e.target.value })) }} sx={{ flex: 2, minWidth: 0 }} />
        <TextField size='small' label={t('channel.searchModel')} value={inputs.model} onChange={(e) => { setInputs((f) => ({ ...f, model: e.target.value })) }} sx={{ flex: 1, minWidth: 0 }} />
        <TextField
          select
          size='small'
          label={t('channel.searchGroup')}
          value={inputs.group}
          onChange={(e) => { setInputs((f) => ({ ...f, group: e.target.value })) }}
          sx={{ flex: 1, minWidth: 140 }}
          slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
        >
          <MenuItem value=''>{t('channel.allGroups')}</MenuItem>
          {groups.map((g) => <MenuItem key={g} value={g}>{g}</MenuItem>)}
        </TextField>
        <Button type='submit' variant='outlined' startIcon={<SearchIcon />}>{t('common.search')}</Button>
      </Stack>
      <Stack direction='row' spacing={1} useFlexGap sx={{ flexWrap: 'wrap', alignItems: 'center' }}>
        <Button variant='contained' startIcon={<AddIcon />} onClick={drawer.openNew}>{t('channel.add')}</Button>
        <Button variant='outlined' startIcon={<NetworkCheckIcon />} onClick={() => { void testAll() }}>{t('channel.testAll')}</Button>
        <Button variant='outlined' startIcon={balancingAll ? <CircularProgress size={16} /> : <AttachMoneyIcon />} disabled={balancingAll} onClick={() => { void updateAllBalances() }}>{t('channel.balance.updateAll')}</Button>
        <Button variant='outlined' color='error' startIcon={<DeleteSweepIcon />} onClick={() => { void deleteDisabled() }}>{t('channel.deleteDisabled')}</Button>
        <Button variant='outlined' startIcon={<BuildIcon />} onClick={() => { void act(fixChannels, { done: (count) => t('channel.fixed', { count }), reload: 'always' }) }}>{t('channel.fix')}</Button>
        <Button variant='outlined' startIcon={<RefreshIcon />} onClick={reload}>{t('common.refresh')}</Button>
        <FormControlLabel
          sx={{ ml: 0.5 }}
          control={<Switch checked={idSort} onChange={(e) => { setIdSort(e.target.checked); setPage(1) }} />}
          label={t('channel.idSort')}
        />
        <FormControlLabel
          control={<Switch checked={tagMode} onChange={(e) => { setTagMode(e.target.checked); setPage(1) }} />}
          label={t('channel.tagMode')}
        />
      </Stack>
      <PagedTable
        ariaLabel={t('channel.title')}
        loading={loading}
        columns={COLUMNS}
        empty={items.length === 0 && !loading}
        emptyText={t('channel.empty')}
        paging={paging}
      >
        {items.map((item) => isTagRow(item)
          ? (
            <Fragment key={`tag:${item.tag}`}>
              <TagRow
                row={item}
                typeName={typeName(item.type)}
                expanded={expanded.selected.has(item.tag)}
                onExpand={() => { expanded.toggle(item.tag) }}
                onEnableAll={() => { void act(async () => await setTagStatus(item.tag, true), { done: (count) => t('channel.tagEnabled', { count }), reload: 'always' }) }}
                onDisableAll={() => { void act(async () => await setTagStatus(item.tag, false), { done: (count) => t('channel.tagDisabled', { count }), reload: 'always' }) }}
                onEditTag={() => { setTagEditing(item) }}
                onPriority={async (text) => await setTagPriority(item, text)}
                onWeight={async (text) => await setTagWeight(item, text)}
              />
              {expanded.selected.has(item.tag) && item.children.map((child) => channelRow(child, true))}
            </Fragment>
            )
          : channelRow(item))}
      </PagedTable>

      <ChannelDrawer open={drawer.open} channelId={drawer.id} types={types} groups={groups} onClose={drawer.close} onSaved={(unpriced) => { void saved(unpriced) }} />
      <KeysDialog channel={keysOf} onClose={() => { setKeysOf(undefined) }} onChanged={reload} />
      <TagDialog row={tagEditing} groups={groups} onClose={() => { setTagEditing(undefined) }} onSaved={() => { setTagEditing(undefined); reload() }} />

      {confirmDialog}
    </Stack>
  )
}
