import { CHANNEL_STATUS, type ChannelTagRow, type ChannelView } from '@modelgate/contracts'
import Button from '@mui/material/Button'
import CircularProgress from '@mui/material/CircularProgress'
import FormControlLabel from '@mui/material/FormControlLabel'
import MenuItem from '@mui/material/MenuItem'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import TableCell from '@mui/material/TableCell'
import TextField from '@mui/material/TextField'
import AddIcon from '@mui/icons-material/Add'
import AttachMoneyIcon from '@mui/icons-material/AttachMoney'
import BuildIcon from '@mui/icons-material/BuildOutlined'
import DeleteSweepIcon from '@mui/icons-material/DeleteSweepOutlined'
import NetworkCheckIcon from '@mui/icons-material/NetworkCheck'
import RefreshIcon from '@mui/icons-material/Refresh'
import SearchIcon from '@mui/icons-material/Search'
import { type Dispatch, type FormEvent, Fragment, type SetStateAction, useCallback, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useLocation, useNavigate, useParams } from 'react-router-dom'
import { useConfirm } from '../../components/Confirm'
import { useNotify } from '../../components/Notify'
import { PageTitle } from '../../components/PageTitle'
import { PagedTable } from '../../components/PagedTable'
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

const COLUMNS = 10

/** Admins: the upstream channels; /channel/add and /channel/edit/{id} open the drawer. */
export default function ChannelPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const navigate = useNavigate()
  const location = useLocation()
  const params = useParams<{ id?: string }>()
  const [idSort, setIdSort] = usePersistentState<boolean>('id-sort', false)
  const [tagMode, setTagMode] = usePersistentState<boolean>('channel-tag-mode', false)
  const [inputs, setInputs] = useState<Filter>({ keyword: '', model: '', group: '' })
  const [filter, setFilter] = useState<Filter>({ keyword: '', model: '', group: '' })
  const [types, setTypes] = useState<Record<string, string>>({})
  const [groups, setGroups] = useState<string[]>([])
  const expanded = useSelection<string>()
  const [testing, setTesting] = useState<Set<number>>(new Set())
  const [balancing, setBalancing] = useState<Set<number>>(new Set())
  const [balancingAll, setBalancingAll] = useState(false)
  const [confirm, confirmDialog] = useConfirm()
  const [tagEditing, setTagEditing] = useState<ChannelTagRow | undefined>()
  const [keysOf, setKeysOf] = useState<ChannelView | undefined>()
  const load = useCallback(async (page: number, size: number) => await listChannels({ page, size, idSort, tagMode, ...filter }), [idSort, tagMode, filter])
  const { items, loading, setPage, reload, paging } = usePagedList(load)

  // The drawer follows the address, so /channel/add and /channel/edit/{id} can be opened directly.
  const adding = location.pathname.replace(/\/+$/, '').endsWith('/channel/add')
  const editId = params.id === undefined ? undefined : Number(params.id)
  const drawerOpen = adding || (editId !== undefined && Number.isSafeInteger(editId) && editId > 0)
  // Kept while the drawer slides out, so its content does not switch to an empty form meanwhile.
  const [drawerId, setDrawerId] = useState<number | undefined>(editId)
  if (drawerOpen && drawerId !== editId) setDrawerId(editId)

  useEffect(() => {
    let live = true
    channelTypes().then((m) => { if (live) setTypes(m) }, (err: unknown) => { if (live) notify.error(err) })
    groupNames().then((g) => { if (live) setGroups(g) }, (err: unknown) => { if (live) notify.error(err) })
    return () => { live = false }
  }, [notify])

  const typeName = (type: number | null) => type === null ? t('channel.mixed') : types[String(type)] ?? t('channel.unknownType', { type })

  const search = (e: FormEvent) => {
    e.preventDefault()
    setPage(1)
    // A new object even when unchanged: searching again refreshes the list.
    setFilter({ ...inputs })
  }

  /** Runs an action and reloads; errors (the server's message) become toasts. */
  const act = async (action: () => Promise<string | undefined>) => {
    try {
      const done = await action()
      if (done !== undefined) notify.success(done)
    } catch (err) {
      notify.error(err)
    } finally {
      reload()
    }
  }

  /** Runs `work` with the row marked busy in one of the busy sets, then reloads the list. */
  const whileBusy = async (mark: Dispatch<SetStateAction<Set<number>>>, id: number, work: () => Promise<void>) => {
    mark((s) => new Set(s).add(id))
    try {
      await work()
    } catch (err) {
      notify.error(err)
    } finally {
      mark((s) => {
        const next = new Set(s)
        next.delete(id)
        return next
      })
      // A test stores the response time and may change the status; a balance update stores the balance.
      reload()
    }
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
    try {
      const { updated, failed } = await updateAllChannelBalances()
      if (failed === 0) notify.success(t('channel.balance.allUpdated', { updated }))
      else notify.warning(t('channel.balance.allUpdatedFailed', { updated, failed }))
    } catch (err) {
      notify.error(err)
    } finally {
      setBalancingAll(false)
      reload()
    }
  }

  const testAll = async () => {
    try {
      notify.info(await testAllChannels())
    } catch (err) {
      notify.error(err)
    }
  }

  const copy = async (row: ChannelView) => {
    try {
      // Copied on the server: the console never holds the key (keys are write-only).
      await copyChannel(row.id, t('channel.copySuffix'))
      notify.success(t('channel.copied'))
      reload()
    } catch (err) {
      notify.error(t('channel.copyFailed', { reason: err instanceof Error ? err.message : String(err) }))
    }
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
    try {
      const saved = await patchChannel(row.id, { priority })
      notify.success(t('channel.priorityUpdated'))
      reload()
      return saved.priority
    } catch (err) {
      notify.error(err)
      return null
    }
  }

  const setWeight = async (row: ChannelView, text: string): Promise<number | null> => {
    const n = parseInteger(text)
    if (n === undefined) {
      notify.error(t('channel.form.error.weight'))
      return null
    }
    try {
      // docs/domain.md: a negative weight becomes 0.
      const saved = await patchChannel(row.id, { weight: Math.max(0, n) })
      notify.success(t('channel.weightUpdated'))
      reload()
      return saved.weight
    } catch (err) {
      notify.error(err)
      return null
    }
  }

  const setTagPriority = async (row: ChannelTagRow, text: string): Promise<number | null> => {
    const priority = priorityOf(text)
    if (priority === undefined) return null
    try {
      await editTag({ tag: row.tag, priority })
      notify.success(t('channel.priorityUpdated'))
      reload()
      return priority
    } catch (err) {
      notify.error(err)
      return null
    }
  }

  const setTagWeight = async (row: ChannelTagRow, text: string): Promise<number | null> => {
    const weight = parseInteger(text)
    // docs/domain.md: a tag's bulk weight must be a non-negative integer.
    if (weight === undefined || weight < 0) {
      notify.error(t('channel.tag.weightInvalid'))
      return null
    }
    try {
      await editTag({ tag: row.tag, weight })
      notify.success(t('channel.weightUpdated'))
      reload()
      return weight
    } catch (err) {
      notify.error(err)
      return null
    }
  }

  const remove = async (row: ChannelView) => {
    const ok = await confirm({ title: t('channel.deleteTitle'), body: t('channel.deleteBody', { name: row.name }), action: t('common.delete'), danger: true })
    if (ok) await act(async () => { await deleteChannel(row.id); return t('channel.deleted') })
  }

  const deleteDisabled = async () => {
    const ok = await confirm({ title: t('channel.deleteDisabledTitle'), body: t('channel.deleteDisabledBody'), action: t('common.delete'), danger: true })
    if (ok) await act(async () => t('channel.disabledDeleted', { count: await deleteDisabledChannels() }))
  }

  const closeDrawer = useCallback(() => { void navigate('/channel') }, [navigate])
  const saved = useCallback(() => {
    void navigate('/channel')
    reload()
  }, [navigate, reload])

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
        void act(async () => {
          await patchChannel(row.id, { status: enabling ? 1 : 2 })
          return enabling ? t('channel.enabled') : t('channel.disabled')
        })
      }}
      onEdit={() => { void navigate(`/channel/edit/${row.id}`) }}
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
        <Button variant='contained' startIcon={<AddIcon />} onClick={() => { void navigate('/channel/add') }}>{t('channel.add')}</Button>
        <Button variant='outlined' startIcon={<NetworkCheckIcon />} onClick={() => { void testAll() }}>{t('channel.testAll')}</Button>
        <Button variant='outlined' startIcon={balancingAll ? <CircularProgress size={16} /> : <AttachMoneyIcon />} disabled={balancingAll} onClick={() => { void updateAllBalances() }}>{t('channel.balance.updateAll')}</Button>
        <Button variant='outlined' color='error' startIcon={<DeleteSweepIcon />} onClick={() => { void deleteDisabled() }}>{t('channel.deleteDisabled')}</Button>
        <Button variant='outlined' startIcon={<BuildIcon />} onClick={() => { void act(async () => t('channel.fixed', { count: await fixChannels() })) }}>{t('channel.fix')}</Button>
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
        head={(
          <>
            <TableCell>{t('channel.col.id')}</TableCell>
            <TableCell>{t('channel.col.name')}</TableCell>
            <TableCell>{t('channel.col.type')}</TableCell>
            <TableCell>{t('channel.col.status')}</TableCell>
            <TableCell>{t('channel.col.group')}</TableCell>
            <TableCell>{t('channel.col.responseTime')}</TableCell>
            <TableCell>{t('channel.col.balance')}</TableCell>
            <TableCell>{t('channel.col.priority')}</TableCell>
            <TableCell>{t('channel.col.weight')}</TableCell>
            <TableCell>{t('channel.col.actions')}</TableCell>
          </>
        )}
        empty={items.length === 0 && !loading}
        emptyText={t('channel.empty')}
        columns={COLUMNS}
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
                onEnableAll={() => { void act(async () => t('channel.tagEnabled', { count: await setTagStatus(item.tag, true) })) }}
                onDisableAll={() => { void act(async () => t('channel.tagDisabled', { count: await setTagStatus(item.tag, false) })) }}
                onEditTag={() => { setTagEditing(item) }}
                onPriority={async (text) => await setTagPriority(item, text)}
                onWeight={async (text) => await setTagWeight(item, text)}
              />
              {expanded.selected.has(item.tag) && item.children.map((child) => channelRow(child, true))}
            </Fragment>
            )
          : channelRow(item))}
      </PagedTable>

      <ChannelDrawer open={drawerOpen} channelId={drawerOpen ? editId : drawerId} types={types} groups={groups} onClose={closeDrawer} onSaved={saved} />
      <KeysDialog channel={keysOf} onClose={() => { setKeysOf(undefined) }} onChanged={reload} />
      <TagDialog row={tagEditing} groups={groups} onClose={() => { setTagEditing(undefined) }} onSaved={() => { setTagEditing(undefined); reload() }} />

      {confirmDialog}
    </Stack>
  )
}
