import { TOP_UP_STATUSES, type TopUpStatus, type TopUpView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import MenuItem from '@mui/material/MenuItem'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import DoneIcon from '@mui/icons-material/DoneAll'
import SearchIcon from '@mui/icons-material/Search'
import { type FormEvent, useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useConfirm } from '../../components/Confirm'
import { RowAction, TimeCell } from '../../components/columns'
import { useNotify } from '../../components/Notify'
import { PagedTable } from '../../components/PagedTable'
import { PageTitle } from '../../components/PageTitle'
import { parseTime, renderQuota } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { usePagedList } from '../../lib/usePagedList'
import { completeTopUpOrder, listTopUpOrders, type TopUpOrderQuery } from './api'

interface Form {
  keyword: string
  status: TopUpStatus | ''
  userId: string
  start: string
  end: string
}

const EMPTY: Form = { keyword: '', status: '', userId: '', start: '', end: '' }

const STATUS_COLOR: Record<TopUpStatus, 'warning' | 'success' | 'error' | 'default'> = { pending: 'warning', success: 'success', failed: 'error', expired: 'default', refunded: 'error' }

/** The form as the API's filters; a message key when a field does not parse. */
function queryOf (form: Form): TopUpOrderQuery | 'badTime' | 'badUser' {
  const start = form.start === '' ? undefined : parseTime(form.start)
  const end = form.end === '' ? undefined : parseTime(form.end)
  if ((form.start !== '' && start === undefined) || (form.end !== '' && end === undefined)) return 'badTime'
  const user = form.userId.trim()
  if (user !== '' && !/^[1-9]\d{0,9}$/.test(user)) return 'badUser'
  return {
    keyword: form.keyword.trim(),
    status: form.status,
    user_id: user === '' ? undefined : Number(user),
    start_timestamp: start,
    // The field is to the second and the API's end is exclusive: include the second shown.
    end_timestamp: end === undefined ? undefined : end + 1
  }
}

/** Every user's top-up orders (admins): filters, status chips, and completing a pending order by hand. */
export default function TopupOrdersPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const { status } = useStatus()
  const [form, setForm] = useState<Form>(EMPTY)
  const [applied, setApplied] = useState<TopUpOrderQuery>(() => queryOf(EMPTY) as TopUpOrderQuery)
  const [confirm, confirmDialog] = useConfirm()
  const load = useCallback(async (page: number, size: number) => await listTopUpOrders(applied, page, size), [applied])
  const { items, loading, setPage, reload, paging } = usePagedList(load, { sizeKey: 'topup-orders' })
  const { act } = useAction(reload)

  const apply = (next: Form) => {
    const q = queryOf(next)
    if (typeof q === 'string') {
      notify.warning(t(`topupAdmin.filter.${q}`))
      return
    }
    setForm(next)
    setPage(1)
    setApplied(q)
  }
  const submit = (e: FormEvent) => {
    e.preventDefault()
    apply(form)
  }
  const set = (key: keyof Form) => (e: { target: { value: string } }) => { setForm((f) => ({ ...f, [key]: e.target.value })) }

  const complete = async (row: TopUpView) => {
    const ok = await confirm({
      title: t('topupAdmin.confirmTitle'),
      body: t('topupAdmin.confirmBody', { tradeNo: row.trade_no, user: row.username === '' ? `#${row.user_id}` : row.username, quota: renderQuota(row.quota, status) }),
      action: t('topupAdmin.complete')
    })
    // A refusal (completed meanwhile by the provider's notification) reloads too.
    if (ok) {
      await act(async () => await completeTopUpOrder(row.trade_no), {
        done: (order) => t('topupAdmin.completed', { quota: renderQuota(order.quota, status), user: order.username === '' ? `#${order.user_id}` : order.username }),
        reload: 'always'
      })
    }
  }

  return (
    <Stack spacing={2}>
      <PageTitle title={t('topupAdmin.title')} intro={t('topupAdmin.intro')} />

      <Paper component='form' onSubmit={submit} sx={{ p: 2 }} aria-label={t('topupAdmin.title')}>
        <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: 'repeat(2, minmax(0, 1fr))', md: 'repeat(3, minmax(0, 1fr))' } }}>
          <TextField size='small' label={t('topupAdmin.filter.keyword')} value={form.keyword} onChange={set('keyword')} />
          <TextField select size='small' label={t('topupAdmin.filter.status')} value={form.status} onChange={set('status')}>
            <MenuItem value=''>{t('topupAdmin.filter.all')}</MenuItem>
            {TOP_UP_STATUSES.map((s) => <MenuItem key={s} value={s}>{t(`topupAdmin.status.${s}`)}</MenuItem>)}
          </TextField>
          <TextField size='small' label={t('topupAdmin.filter.userId')} value={form.userId} onChange={set('userId')} slotProps={{ htmlInput: { inputMode: 'numeric' } }} />
          <TextField
            size='small' type='datetime-local' label={t('topupAdmin.filter.start')} value={form.start} onChange={set('start')}
            slotProps={{ inputLabel: { shrink: true }, htmlInput: { step: 1 } }}
          />
          <TextField
            size='small' type='datetime-local' label={t('topupAdmin.filter.end')} value={form.end} onChange={set('end')}
            slotProps={{ inputLabel: { shrink: true }, htmlInput: { step: 1 } }}
          />
        </Box>
        <Stack direction='row' spacing={1} useFlexGap sx={{ mt: 2, flexWrap: 'wrap', '& > button': { whiteSpace: 'nowrap' } }}>
          <Button type='submit' variant='contained' startIcon={<SearchIcon />}>{t('topupAdmin.filter.query')}</Button>
          <Button onClick={() => { apply(EMPTY) }}>{t('topupAdmin.filter.reset')}</Button>
        </Stack>
      </Paper>

      <PagedTable
        testId='topup-orders'
        ariaLabel={t('topupAdmin.title')}
        loading={loading}
        columns={['tradeNo', 'user', 'money', 'quota', 'method', 'status', 'created', 'completed', 'actions'].map((c) => ({ label: `topupAdmin.col.${c}`, nowrap: true, sticky: c === 'actions' }))}
        empty={items.length === 0 && !loading}
        emptyText={t('topupAdmin.empty')}
        paging={paging}
      >
        {items.map((row) => <OrderRow key={row.id} row={row} onComplete={() => { void complete(row) }} />)}
      </PagedTable>

      {confirmDialog}
    </Stack>
  )
}

function OrderRow ({ row, onComplete }: { row: TopUpView, onComplete: () => void }) {
  const { t } = useTranslation()
  const { status } = useStatus()
  return (
    <TableRow hover data-testid={`topup-order-${row.trade_no}`}>
      <TableCell sx={{ maxWidth: 200 }}>
        <Typography variant='body2' noWrap title={row.trade_no} sx={{ fontFamily: 'monospace' }}>{row.trade_no}</Typography>
      </TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{row.username === '' ? `#${row.user_id}` : `${row.username} (${row.user_id})`}</TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{row.money}</TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{renderQuota(row.quota, status)}</TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{t(`topupAdmin.method.${row.payment_method}`, { defaultValue: row.payment_method })}</TableCell>
      <TableCell><Chip size='small' color={STATUS_COLOR[row.status]} label={t(`topupAdmin.status.${row.status}`)} data-testid='topup-order-status' /></TableCell>
      <TimeCell seconds={row.create_time} />
      <TimeCell seconds={row.complete_time} none='—' />
      <TableCell sx={{ whiteSpace: 'nowrap' }}>
        {row.status === 'pending' && (
          <RowAction label={t('topupAdmin.completeLabel', { tradeNo: row.trade_no })} onClick={onComplete}><DoneIcon fontSize='small' /></RowAction>
        )}
      </TableCell>
    </TableRow>
  )
}
