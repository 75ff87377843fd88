import { AUDIT_ACTIONS, type AuditLogView, ROLES } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import IconButton from '@mui/material/IconButton'
import MenuItem from '@mui/material/MenuItem'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import { useTheme } from '@mui/material/styles'
import Table from '@mui/material/Table'
import TableBody from '@mui/material/TableBody'
import TableCell from '@mui/material/TableCell'
import TableHead from '@mui/material/TableHead'
import TableRow from '@mui/material/TableRow'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import useMediaQuery from '@mui/material/useMediaQuery'
import DownloadIcon from '@mui/icons-material/Download'
import SearchIcon from '@mui/icons-material/Search'
import VisibilityIcon from '@mui/icons-material/Visibility'
import { type FormEvent, useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'
import { TimeCell } from '../../components/columns'
import { PagedTable } from '../../components/PagedTable'
import { PageTitle } from '../../components/PageTitle'
import { saveBlob } from '../../lib/download'
import { formatTime, parseTime } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { usePagedList } from '../../lib/usePagedList'
import { type AuditQuery, exportAudit, fetchAudit } from './api'
import { changeLines } from './changes'

const TARGET_TYPES = ['channel', 'user', 'redemption', 'topup', 'option', 'log', 'oauth_provider'] as const

interface Form {
  actor: string
  action: string
  targetType: string
  targetId: string
  start: string
  end: string
}

const EMPTY: Form = { actor: '', action: '', targetType: '', targetId: '', start: '', end: '' }

/** The form as the API's filters; undefined when a time does not parse. */
function queryOf (form: Form): AuditQuery | undefined {
  const start = form.start === '' ? undefined : parseTime(form.start)
  const end = form.end === '' ? undefined : parseTime(form.end)
  if ((form.start !== '' && start === undefined) || (form.end !== '' && end === undefined)) return undefined
  return {
    actor: form.actor.trim(),
    action: form.action,
    target_type: form.targetType,
    target_id: form.targetId.trim(),
    start_timestamp: start,
    // The field is to the second and the API's end is exclusive: include the second shown.
    end_timestamp: end === undefined ? undefined : end + 1
  }
}

/** The audit trail (super admin only): filters, a page of entries, an entry's before and after, CSV. */
export default function AuditPage () {
  const { t } = useTranslation()
  const notify = useNotify()
  const [form, setForm] = useState<Form>(EMPTY)
  const [applied, setApplied] = useState<AuditQuery>(() => queryOf(EMPTY)!)
  const [open, setOpen] = useState<AuditLogView | undefined>()
  const load = useCallback(async (page: number, size: number) => await fetchAudit(applied, page, size), [applied])
  const { items, loading, setPage, paging } = usePagedList(load, { sizeKey: 'audit' })
  const { act, busy: exporting } = useAction()

  const apply = (next: Form) => {
    const q = queryOf(next)
    if (q === undefined) {
      notify.warning(t('audit.filter.badTime'))
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
  const download = async () => {
    // What is exported is what the list shows: the filters last applied.
    await act(async () => {
      const { blob, fileName } = await exportAudit(applied)
      saveBlob(blob, fileName)
      return fileName
    }, { done: (file) => t('audit.exported', { file }) })
  }

  return (
    <Stack spacing={2}>
      <PageTitle title={t('audit.title')} intro={t('audit.intro')} />

      <Paper component='form' onSubmit={submit} sx={{ p: 2 }} aria-label={t('audit.title')}>
        <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: 'repeat(2, minmax(0, 1fr))', md: 'repeat(3, minmax(0, 1fr))' } }}>
          <TextField size='small' label={t('audit.filter.actor')} value={form.actor} onChange={set('actor')} />
          <TextField select size='small' label={t('audit.filter.action')} value={form.action} onChange={set('action')}>
            <MenuItem value=''>{t('audit.filter.all')}</MenuItem>
            {AUDIT_ACTIONS.map((a) => <MenuItem key={a} value={a}>{`${a} · ${t(`audit.actions.${a}`)}`}</MenuItem>)}
          </TextField>
          <TextField select size='small' label={t('audit.filter.targetType')} value={form.targetType} onChange={set('targetType')}>
            <MenuItem value=''>{t('audit.filter.all')}</MenuItem>
            {TARGET_TYPES.map((x) => <MenuItem key={x} value={x}>{t(`audit.target.${x}`)}</MenuItem>)}
          </TextField>
          <TextField size='small' label={t('audit.filter.targetId')} value={form.targetId} onChange={set('targetId')} />
          <TextField
            size='small' type='datetime-local' label={t('audit.filter.start')} value={form.start} onChange={set('start')}
            slotProps={{ inputLabel: { shrink: true }, htmlInput: { step: 1 } }}
          />
          <TextField
            size='small' type='datetime-local' label={t('audit.filter.end')} value={form.end} onChange={set('end')}
            slotProps={{ inputLabel: { shrink: true }, htmlInput: { step: 1 } }}
          />
        </Box>
        <Stack direction='row' spacing={1} useFlexGap sx={{ mt: 2, flexWrap: 'wrap', '& > button': { whiteSpace: 'nowrap' } }}>
          <Button type='submit' variant='contained' startIcon={<SearchIcon />}>{t('audit.filter.query')}</Button>
          <Button onClick={() => { apply(EMPTY) }}>{t('audit.filter.reset')}</Button>
          <Button variant='outlined' startIcon={<DownloadIcon />} disabled={exporting} onClick={() => { void download() }}>{t('audit.filter.export')}</Button>
        </Stack>
      </Paper>

      <PagedTable
        testId='audit-table'
        ariaLabel={t('audit.title')}
        loading={loading}
        columns={[
          { cell: <TableCell padding='checkbox' aria-label={t('audit.col.details')} /> },
          ...['time', 'actor', 'ip', 'action', 'target', 'changes', 'note'].map((c) => ({ label: `audit.col.${c}` }))
        ]}
        empty={items.length === 0 && !loading}
        emptyText={t('audit.empty')}
        paging={paging}
      >
        {items.map((row) => <AuditRow key={row.id} row={row} onOpen={() => { setOpen(row) }} />)}
      </PagedTable>

      <AuditDetail entry={open} onClose={() => { setOpen(undefined) }} />
    </Stack>
  )
}

function useRoleLabel () {
  const { t } = useTranslation()
  return (role: number) => role >= ROLES.root ? t('audit.role.root') : role >= ROLES.admin ? t('audit.role.admin') : t('audit.role.other', { role })
}

function useTargetLabel () {
  const { t } = useTranslation()
  return (type: string) => (TARGET_TYPES as readonly string[]).includes(type) ? t(`audit.target.${type}`) : type
}

function AuditRow ({ row, onOpen }: { row: AuditLogView, onOpen: () => void }) {
  const { t } = useTranslation()
  const roleLabel = useRoleLabel()
  const targetLabel = useTargetLabel()
  const fields = Object.keys(row.changes).sort().join(', ')
  return (
    <TableRow hover data-testid='audit-row'>
      <TableCell padding='checkbox'>
        <IconButton size='small' aria-label={t('audit.open', { id: row.id })} onClick={onOpen}><VisibilityIcon fontSize='small' /></IconButton>
      </TableCell>
      <TimeCell seconds={row.created_at} />
      <TableCell sx={{ whiteSpace: 'nowrap' }}>
        {row.actor_name}
        <Chip size='small' variant='outlined' sx={{ ml: 1 }} label={roleLabel(row.actor_role)} />
      </TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{row.ip}</TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>
        <Chip size='small' color={row.action.endsWith('.delete') ? 'error' : row.action.endsWith('.create') ? 'success' : 'default'} label={row.action} title={t(`audit.actions.${row.action}`, { defaultValue: row.action })} />
      </TableCell>
      <TableCell sx={{ whiteSpace: 'nowrap' }}>{row.target_id === '' ? targetLabel(row.target_type) : `${targetLabel(row.target_type)} ${row.target_id}`}</TableCell>
      <TableCell sx={{ maxWidth: 240 }}>
        <Typography variant='body2' noWrap title={fields}>{fields}</Typography>
      </TableCell>
      <TableCell sx={{ maxWidth: 200 }}>
        <Typography variant='body2' noWrap title={row.note}>{row.note}</Typography>
      </TableCell>
    </TableRow>
  )
}

const VALUE_SX = { fontFamily: 'monospace', whiteSpace: 'pre-wrap', wordBreak: 'break-all', verticalAlign: 'top' } as const

function AuditDetail ({ entry, onClose }: { entry: AuditLogView | undefined, onClose: () => void }) {
  const { t } = useTranslation()
  const theme = useTheme()
  const small = useMediaQuery(theme.breakpoints.down('sm'))
  const roleLabel = useRoleLabel()
  const targetLabel = useTargetLabel()
  const lines = entry === undefined ? [] : changeLines(entry.changes)
  const absent = <Typography component='span' variant='body2' color='text.disabled'>{t('audit.detail.absent')}</Typography>
  return (
    <Dialog open={entry !== undefined} onClose={onClose} fullWidth maxWidth='md' fullScreen={small}>
      <DialogTitle>{t('audit.detail.title', { id: entry?.id ?? '' })}</DialogTitle>
      <DialogContent>
        {entry !== undefined && (
          <Stack spacing={2}>
            <Box component='dl' sx={{ display: 'grid', gridTemplateColumns: 'max-content minmax(0, 1fr)', columnGap: 2, rowGap: 0.5, m: 0, '& dd': { m: 0, wordBreak: 'break-all' } }}>
              <Typography component='dt' variant='body2' color='text.secondary'>{t('audit.col.time')}</Typography>
              <Typography component='dd' variant='body2'>{formatTime(entry.created_at)}</Typography>
              <Typography component='dt' variant='body2' color='text.secondary'>{t('audit.col.actor')}</Typography>
              <Typography component='dd' variant='body2'>{`${entry.actor_name} (ID ${entry.actor_id}, ${roleLabel(entry.actor_role)})`}</Typography>
              <Typography component='dt' variant='body2' color='text.secondary'>{t('audit.col.ip')}</Typography>
              <Typography component='dd' variant='body2'>{entry.ip}</Typography>
              <Typography component='dt' variant='body2' color='text.secondary'>{t('audit.col.action')}</Typography>
              <Typography component='dd' variant='body2'>{`${entry.action} · ${t(`audit.actions.${entry.action}`, { defaultValue: entry.action })}`}</Typography>
              <Typography component='dt' variant='body2' color='text.secondary'>{t('audit.col.target')}</Typography>
              <Typography component='dd' variant='body2'>{`${targetLabel(entry.target_type)} ${entry.target_id}`.trim()}</Typography>
              {entry.note !== '' && (
                <>
                  <Typography component='dt' variant='body2' color='text.secondary'>{t('audit.col.note')}</Typography>
                  <Typography component='dd' variant='body2'>{entry.note}</Typography>
                </>
              )}
            </Box>
            {lines.length === 0
              ? <Typography variant='body2' color='text.secondary'>{t('audit.detail.noChanges')}</Typography>
              : (
                <Table size='small' data-testid='audit-changes' sx={{ tableLayout: 'fixed' }}>
                  <TableHead>
                    <TableRow>
                      <TableCell sx={{ width: '25%' }}>{t('audit.detail.field')}</TableCell>
                      <TableCell>{t('audit.detail.before')}</TableCell>
                      <TableCell>{t('audit.detail.after')}</TableCell>
                    </TableRow>
                  </TableHead>
                  <TableBody>
                    {lines.map((l) => (
                      <TableRow key={l.field}>
                        <TableCell sx={{ ...VALUE_SX, fontWeight: 500 }}>{l.field}</TableCell>
                        <TableCell sx={VALUE_SX}>{l.before ?? absent}</TableCell>
                        <TableCell sx={VALUE_SX}>{l.after ?? absent}</TableCell>
                      </TableRow>
                    ))}
                  </TableBody>
                </Table>
                )}
          </Stack>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.close')}</Button>
      </DialogActions>
    </Dialog>
  )
}
