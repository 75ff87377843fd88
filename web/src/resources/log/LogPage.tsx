import { LOG_TYPE } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import Collapse from '@mui/material/Collapse'
import IconButton from '@mui/material/IconButton'
import Link from '@mui/material/Link'
import MenuItem from '@mui/material/MenuItem'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import TextField from '@mui/material/TextField'
import Tooltip from '@mui/material/Tooltip'
import Typography from '@mui/material/Typography'
import KeyboardArrowDownIcon from '@mui/icons-material/KeyboardArrowDown'
import KeyboardArrowUpIcon from '@mui/icons-material/KeyboardArrowUp'
import SearchIcon from '@mui/icons-material/Search'
import dayjs from 'dayjs'
import { type FormEvent, useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { isAdmin, useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { TimeCell } from '../../components/columns'
import { PagedTable } from '../../components/PagedTable'
import { type Column, shownColumns } from '../../lib/columns'
import { parseTime, renderNumber, renderQuota } from '../../lib/format'
import { useLoad } from '../../lib/useLoad'
import { usePagedList } from '../../lib/usePagedList'
import { fetchLogs, fetchLogStats } from './api'
import { BillingDetails } from './BillingDetails'
import { breakdownOf, firstResponseColour, isModelCall, num, durationColour } from './breakdown'
import { type LogQuery, type LogRow, paidByPlan } from './types'
import { UserInfoDialog } from './UserInfoDialog'

const INPUT_TIME = 'YYYY-MM-DDTHH:mm:ss'
/** How many days back a normal user sees their own usage details (the API enforces it). */
const SELF_LOG_DAYS = 3

/** The type select and the type chips (docs/domain.md). */
const TYPES = [
  { value: LOG_TYPE.topup, label: 'log.type.recharge', colour: 'info' },
  { value: LOG_TYPE.consume, label: 'log.type.consume', colour: 'success' },
  { value: LOG_TYPE.manage, label: 'log.type.manage', colour: 'warning' },
  { value: LOG_TYPE.system, label: 'log.type.system', colour: 'secondary' },
  { value: LOG_TYPE.error, label: 'log.type.error', colour: 'error' }
] as const

/** The type filter's value for every type (the API's type 0). */
const ANY_TYPE = 0

// Unknown and consumption rows involve a model call (docs/domain.md); error rows are failed calls.

interface Form {
  tokenName: string
  modelName: string
  start: string
  end: string
  /** The end field still says "now": each query moves it to the current time. */
  endIsNow: boolean
  type: number
  username: string
  channel: string
}

function defaultForm (): Form {
  return {
    tokenName: '',
    modelName: '',
    start: dayjs().startOf('day').format(INPUT_TIME),
    end: dayjs().format(INPUT_TIME),
    endIsNow: true,
    type: ANY_TYPE,
    username: '',
    channel: ''
  }
}

/** The form as the API's filters; undefined when a time does not parse. */
function queryOf (form: Form): LogQuery | undefined {
  const start = form.start === '' ? undefined : parseTime(form.start)
  const end = form.end === '' ? undefined : parseTime(form.end)
  if ((form.start !== '' && start === undefined) || (form.end !== '' && end === undefined)) return undefined
  const channel = Number(form.channel)
  return {
    type: form.type,
    token_name: form.tokenName.trim(),
    model_name: form.modelName.trim(),
    start_timestamp: start,
    // The field is to the second and the API's end is exclusive: include the second shown.
    end_timestamp: end === undefined ? undefined : end + 1,
    username: form.username.trim(),
    channel: Number.isInteger(channel) && channel > 0 ? channel : undefined
  }
}

/** Usage logs: the caller's own, or everyone's for admins (with username and channel filters). */
export default function LogPage () {
  const { t } = useTranslation()
  const { status } = useStatus()
  const { user } = useAuth()
  const notify = useNotify()
  const admin = isAdmin(user)
  const [form, setForm] = useState<Form>(defaultForm)
  const [applied, setApplied] = useState<LogQuery>(() => queryOf(form)!)
  const [userInfo, setUserInfo] = useState<number | undefined>()
  const closeUserInfo = useCallback(() => { setUserInfo(undefined) }, [])
  const quotaPerUnit = status?.quota_per_unit !== undefined && status.quota_per_unit > 0 ? status.quota_per_unit : 500_000

  const load = useCallback(async (page: number, size: number) => await fetchLogs(admin, applied, page, size), [admin, applied])
  const { items, loading, setPage, paging } = usePagedList(load)
  // The totals are no more than a hint: a failure shows none, without a toast.
  const loadStats = useCallback(async () => await fetchLogStats(admin, applied), [admin, applied])
  const statsLoad = useLoad(loadStats, { quiet: true })
  const stats = statsLoad.error === undefined ? statsLoad.data : undefined

  const apply = (next: Form) => {
    const fresh = next.endIsNow ? { ...next, end: dayjs().format(INPUT_TIME) } : next
    const q = queryOf(fresh)
    if (q === undefined) {
      notify.warning(t('log.filter.badTime'))
      return
    }
    setForm(fresh)
    setPage(1)
    setApplied(q)
  }
  const submit = (e: FormEvent) => {
    e.preventDefault()
    apply(form)
  }
  const set = <K extends keyof Form>(key: K) => (e: { target: { value: string } }) => {
    const value = key === 'type' ? Number(e.target.value) : e.target.value
    setForm((f) => ({ ...f, [key]: value, ...(key === 'end' ? { endIsNow: false } : {}) }))
  }
  const money = (quota: number) => renderQuota(quota, status, 6)
  // Normal users cannot pick a time the API would not show them anyway.
  const earliest = admin ? undefined : dayjs().subtract(SELF_LOG_DAYS, 'day').format(INPUT_TIME)
  // What an operator reads first leads (time, model, quota: all that a 600 px window shows before
  // scrolling); timings and the summary show from 1536 px, and always in the row's details.
  const columns: Column[] = [
    { cell: <TableCell padding='checkbox' /> },
    { label: 'log.col.time' },
    { label: 'log.col.model' },
    { label: 'log.col.quota', align: 'right' },
    { label: 'log.col.type' },
    { label: 'log.col.user' },
    { label: 'log.col.channel', when: admin },
    { label: 'log.col.token' },
    { label: 'log.col.prompt', align: 'right' },
    { label: 'log.col.completion', align: 'right' },
    { label: 'log.col.useTime', from: 'xl' },
    { label: 'log.col.firstResponse', from: 'xl' },
    { label: 'log.col.stream', from: 'xl' },
    { label: 'log.col.details', from: 'xl' }
  ]

  return (
    <Stack spacing={2}>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ alignItems: { sm: 'center' } }}>
        <Box sx={{ flexGrow: 1 }}>
          <Typography variant='h5' component='h1'>{t('log.title')}</Typography>
          {!admin && <Typography variant='body2' color='text.secondary' data-testid='log-retention'>{t('log.retention', { days: SELF_LOG_DAYS })}</Typography>}
        </Box>
        <Tooltip title={t('log.stats.hint')}>
          <Stack direction='row' sx={{ gap: 1, flexWrap: 'wrap' }} data-testid='log-stats'>
            <Chip color='primary' label={t('log.stats.quota', { quota: money(stats?.quota ?? 0) })} data-testid='stat-quota' />
            <Chip color='secondary' variant='outlined' label={t('log.stats.rpm', { n: renderNumber(stats?.rpm ?? 0) })} data-testid='stat-rpm' />
            <Chip color='secondary' variant='outlined' label={t('log.stats.tpm', { n: renderNumber(stats?.tpm ?? 0) })} data-testid='stat-tpm' />
          </Stack>
        </Tooltip>
      </Stack>

      <Paper component='form' onSubmit={submit} sx={{ p: 2 }}>
        <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: 'repeat(2, minmax(0, 1fr))', md: 'repeat(3, minmax(0, 1fr))', xl: 'repeat(4, minmax(0, 1fr))' } }}>
          <TextField size='small' label={t('log.filter.tokenName')} value={form.tokenName} onChange={set('tokenName')} />
          <TextField size='small' label={t('log.filter.modelName')} value={form.modelName} onChange={set('modelName')} />
          <TextField
            size='small' type='datetime-local' label={t('log.filter.start')} value={form.start} onChange={set('start')}
            slotProps={{ inputLabel: { shrink: true }, htmlInput: { step: 1, min: earliest } }}
          />
          <TextField
            size='small' type='datetime-local' label={t('log.filter.end')} value={form.end} onChange={set('end')}
            slotProps={{ inputLabel: { shrink: true }, htmlInput: { step: 1, min: earliest } }}
          />
          <TextField select size='small' label={t('log.filter.type')} value={String(form.type)} onChange={set('type')}>
            <MenuItem value={String(ANY_TYPE)}>{t('log.type.all')}</MenuItem>
            {TYPES.map((x) => <MenuItem key={x.value} value={String(x.value)}>{t(x.label)}</MenuItem>)}
          </TextField>
          {admin && <TextField size='small' label={t('log.filter.username')} value={form.username} onChange={set('username')} />}
          {admin && (
            <TextField
              size='small' label={t('log.filter.channel')} value={form.channel} onChange={set('channel')}
              slotProps={{ htmlInput: { inputMode: 'numeric', pattern: '[0-9]*' } }}
            />
          )}
          <Stack direction='row' spacing={1} sx={{ '& > button': { whiteSpace: 'nowrap' } }}>
            <Button type='submit' variant='contained' startIcon={<SearchIcon />}>{t('log.filter.query')}</Button>
            <Button onClick={() => { apply(defaultForm()) }}>{t('log.filter.reset')}</Button>
          </Stack>
        </Box>
      </Paper>

      <PagedTable
        testId='log-table'
        loading={loading}
        // A size container: the expanded details measure the visible width, not the table's.
        containerSx={{ containerType: 'inline-size' }}
        columns={columns}
        empty={items.length === 0 && !loading}
        emptyText={t('log.empty')}
        paging={paging}
      >
        {items.map((row) => (
          <LogTableRow
            key={row.id} row={row} admin={admin} columns={shownColumns(columns).length} quotaPerUnit={quotaPerUnit}
            money={money} onUser={setUserInfo}
          />
        ))}
      </PagedTable>
      {admin && <UserInfoDialog userId={userInfo} onClose={closeUserInfo} />}
    </Stack>
  )
}

interface RowProps {
  row: LogRow
  admin: boolean
  columns: number
  quotaPerUnit: number
  money: (quota: number) => string
  onUser: (id: number) => void
}

function LogTableRow ({ row, admin, columns, quotaPerUnit, money, onUser }: RowProps) {
  const { t } = useTranslation()
  const [open, setOpen] = useState(false)
  const type = TYPES.find((x) => x.value === row.type)
  const call = isModelCall(row.type)
  const frt = row.other?.frt ?? 0
  const plan = row.type === LOG_TYPE.consume ? paidByPlan(row.other) : undefined
  const b = row.type === LOG_TYPE.consume ? breakdownOf(row, quotaPerUnit) : undefined
  const summary = b === undefined
    ? row.content
    : b.kind === 'per_call'
      ? t('log.summaryPerCall', { price: num(b.modelPrice), group: num(b.groupRatio) })
      : t('log.summary', { model: num(b.modelRatio), group: num(b.groupRatio) })
  return (
    <>
      <TableRow hover data-testid='log-row' sx={{ '& > td': { borderBottom: open ? 'unset' : undefined } }}>
        <TableCell padding='checkbox'>
          <IconButton size='small' aria-label={t(open ? 'log.collapse' : 'log.expand')} aria-expanded={open} onClick={() => { setOpen(!open) }}>
            {open ? <KeyboardArrowUpIcon /> : <KeyboardArrowDownIcon />}
          </IconButton>
        </TableCell>
        <TimeCell seconds={row.created_at} />
        <TableCell sx={{ whiteSpace: 'nowrap' }}>{row.model_name}</TableCell>
        <TableCell align='right' sx={{ whiteSpace: 'nowrap' }} data-testid='log-quota'>{money(row.quota)}</TableCell>
        <TableCell sx={{ whiteSpace: 'nowrap' }}>
          <Chip size='small' color={type?.colour ?? 'default'} label={t(type?.label ?? 'log.type.unknown')} />
          {plan !== undefined && (
            <Tooltip title={t('log.paidBy.plan', { title: plan })}>
              <Chip size='small' variant='outlined' color='primary' label={t('log.paidBy.chip')} sx={{ ml: 0.5 }} data-testid='log-paid-by-plan' />
            </Tooltip>
          )}
        </TableCell>
        <TableCell sx={{ whiteSpace: 'nowrap' }}>
          {admin && row.user_id > 0
            ? (
              <Link component='button' type='button' variant='body2' aria-label={t('log.user.open', { name: row.username })} onClick={() => { onUser(row.user_id) }}>
                {row.username}
              </Link>
              )
            : row.username}
        </TableCell>
        {admin && (
          <TableCell>{(row.channel_id ?? 0) > 0 ? <Chip size='small' variant='outlined' label={row.channel_id} /> : '-'}</TableCell>
        )}
        <TableCell sx={{ whiteSpace: 'nowrap' }}>{row.token_name}</TableCell>
        <TableCell align='right'>{call ? row.prompt_tokens : ''}</TableCell>
        <TableCell align='right'>{call ? row.completion_tokens : ''}</TableCell>
        <TableCell>
          {call && <Chip size='small' variant='outlined' color={durationColour(row.use_time)} label={t('log.seconds', { n: row.use_time })} />}
        </TableCell>
        <TableCell>
          {call && frt > 0 && <Chip size='small' variant='outlined' color={firstResponseColour(frt / 1000)} label={t('log.seconds', { n: (frt / 1000).toFixed(1) })} />}
        </TableCell>
        <TableCell>
          {call && <Chip size='small' variant='outlined' color={row.is_stream ? 'info' : 'default'} label={row.is_stream ? t('log.stream') : t('log.notStream')} />}
        </TableCell>
        <TableCell sx={{ maxWidth: 280 }}>
          <Typography variant='body2' noWrap title={summary}>{summary}</Typography>
        </TableCell>
      </TableRow>
      <TableRow>
        <TableCell colSpan={columns} sx={{ py: 0, ...(open ? {} : { borderBottom: 'none' }) }}>
          <Collapse in={open} timeout='auto' unmountOnExit>
            {/* Kept in view while the wide table scrolls sideways (small screens). */}
            <Box sx={{ position: 'sticky', left: 0, width: 'calc(100cqw - 32px)' }}>
              <BillingDetails row={row} quotaPerUnit={quotaPerUnit} admin={admin} />
            </Box>
          </Collapse>
        </TableCell>
      </TableRow>
    </>
  )
}
