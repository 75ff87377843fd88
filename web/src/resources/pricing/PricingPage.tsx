import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Checkbox from '@mui/material/Checkbox'
import Chip from '@mui/material/Chip'
import InputAdornment from '@mui/material/InputAdornment'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import TextField from '@mui/material/TextField'
import Tooltip from '@mui/material/Tooltip'
import Typography from '@mui/material/Typography'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import SearchIcon from '@mui/icons-material/Search'
import { useMemo, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { PagedTable, SelectAllCell } from '../../components/PagedTable'
import { useLoad } from '../../lib/useLoad'
import { usePageSize } from '../../lib/usePersistentState'
import { useSelection } from '../../lib/useSelection'
import { fetchPricing } from './api'
import { groupRatioOf, initialGroup, priceOf, ratioColour, usd } from './prices'

/** Public model prices per group: search, group switching, copy the selected model names. */
export default function PricingPage () {
  const { t } = useTranslation()
  const { user } = useAuth()
  const notify = useNotify()
  const { data: pricing, error } = useLoad(fetchPricing)
  const failed = error !== undefined
  const [group, setGroup] = useState<string | undefined>()
  const [search, setSearch] = useState('')
  const selection = useSelection<string>()
  const { selected } = selection
  const [page, setPage] = useState(1)
  const [pageSize, setPageSize] = usePageSize()

  const groups = useMemo(() => Object.keys(pricing?.usable_group ?? {}), [pricing])
  const current = group ?? initialGroup(groups, user?.group)
  const ratio = groupRatioOf(pricing?.group_ratio ?? {}, current)
  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase()
    return (pricing?.data ?? []).filter((m) => m.model_name.toLowerCase().includes(needle))
  }, [pricing, search])
  // A narrower search can leave the page past the end: show its last page instead.
  const pageNow = Math.min(page, Math.max(1, Math.ceil(shown.length / pageSize)))
  const visible = shown.slice((pageNow - 1) * pageSize, pageNow * pageSize)

  const copySelected = () => {
    // In table order, so the copied list reads like the page.
    const names = (pricing?.data ?? []).map((m) => m.model_name).filter((m) => selected.has(m))
    if (names.length === 0) {
      notify.warning(t('common.noneSelected'))
      return
    }
    void notify.copy(names.join(','), t('pricing.copied', { n: names.length }))
  }

  return (
    <Stack spacing={2}>
      <Typography variant='h5' component='h1'>{t('pricing.title')}</Typography>
      <Paper sx={{ p: 2 }}>
        <Stack spacing={2}>
          {groups.length > 0 && (
            <Stack direction='row' sx={{ gap: 1, flexWrap: 'wrap', alignItems: 'center' }} role='radiogroup' aria-label={t('pricing.group')}>
              <Typography variant='body2' color='text.secondary'>{t('pricing.group')}:</Typography>
              {groups.map((g) => {
                const r = groupRatioOf(pricing?.group_ratio ?? {}, g)
                const on = g === current
                return (
                  <Tooltip key={g} title={pricing?.usable_group[g] ?? g}>
                    <Chip
                      role='radio'
                      aria-checked={on}
                      data-testid={`group-${g}`}
                      clickable
                      color={on ? 'primary' : 'default'}
                      variant={on ? 'filled' : 'outlined'}
                      onClick={() => { setGroup(g) }}
                      label={(
                        <Box component='span' sx={{ display: 'inline-flex', alignItems: 'center', gap: 0.75 }}>
                          {g}
                          <RatioBadge ratio={r} label={t('pricing.ratio', { ratio: r })} />
                        </Box>
                      )}
                    />
                  </Tooltip>
                )
              })}
            </Stack>
          )}
          <Typography variant='body2' color='text.secondary' data-testid='group-hint'>{t('pricing.groupHint', { group: current, ratio })}</Typography>
          <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1}>
            <TextField
              size='small' label={t('pricing.search')} value={search}
              onChange={(e) => { setSearch(e.target.value); setPage(1) }}
              slotProps={{ input: { startAdornment: <InputAdornment position='start'><SearchIcon fontSize='small' /></InputAdornment> } }}
              sx={{ flexGrow: 1, maxWidth: { sm: 360 } }}
            />
            <Button variant='outlined' startIcon={<ContentCopyIcon />} onClick={copySelected}>
              {t('pricing.copySelected')}{selected.size > 0 ? ` (${selected.size})` : ''}
            </Button>
          </Stack>
        </Stack>
      </Paper>
      {failed && pricing === undefined && <Alert severity='error'>{t('status.unreachable')}</Alert>}
      <PagedTable
        testId='pricing-table'
        loading={pricing === undefined && !failed}
        columns={[
          { cell: <SelectAllCell selection={selection} shown={visible.map((m) => m.model_name)} label={t('pricing.selectAll')} /> },
          { label: 'pricing.col.model' },
          { label: 'pricing.col.type' },
          { label: 'pricing.col.modelRatio', align: 'right' },
          { label: 'pricing.col.completionRatio', align: 'right' },
          { label: 'pricing.col.prompt' },
          { label: 'pricing.col.completion' },
          { label: 'pricing.col.groups' }
        ]}
        empty={pricing !== undefined && shown.length === 0}
        emptyText={pricing?.data.length === 0 ? t('pricing.noModels') : t('pricing.empty')}
        paging={{ total: shown.length, page: pageNow, size: pageSize, onPage: setPage, onSize: setPageSize }}
      >
        {visible.map((m) => {
          const price = priceOf(m, ratio)
          const usable = m.enable_groups.includes(current)
          return (
            <TableRow key={m.model_name} hover selected={selected.has(m.model_name)} data-testid='pricing-row'>
              <TableCell padding='checkbox'>
                <Checkbox
                  checked={selected.has(m.model_name)}
                  onChange={() => { selection.toggle(m.model_name) }}
                  slotProps={{ input: { 'aria-label': t('pricing.select', { model: m.model_name }) } }}
                />
              </TableCell>
              <TableCell sx={{ whiteSpace: 'nowrap', fontWeight: 500 }}>{m.model_name}</TableCell>
              <TableCell>
                <Chip size='small' color={m.quota_type === 1 ? 'secondary' : 'primary'} variant='outlined' label={m.quota_type === 1 ? t('pricing.perCall') : t('pricing.perToken')} />
              </TableCell>
              <TableCell align='right'>{m.quota_type === 1 ? '-' : Number(m.model_ratio.toFixed(6))}</TableCell>
              <TableCell align='right'>{m.quota_type === 1 ? '-' : Number(m.completion_ratio.toFixed(6))}</TableCell>
              <TableCell sx={{ whiteSpace: 'nowrap' }} data-testid='price-prompt'>
                {price.kind === 'per_call' ? t('pricing.callPrice', { price: usd(price.call) }) : t('pricing.perMillion', { price: usd(price.prompt) })}
              </TableCell>
              <TableCell sx={{ whiteSpace: 'nowrap' }} data-testid='price-completion'>
                {price.kind === 'per_call' ? '-' : t('pricing.perMillion', { price: usd(price.completion) })}
              </TableCell>
              <TableCell>
                <Stack direction='row' sx={{ gap: 0.5, flexWrap: 'wrap', minWidth: 120 }}>
                  {m.enable_groups.map((g) => (
                    <Chip
                      key={g} size='small' label={g}
                      color={g === current ? 'primary' : 'default'}
                      variant={g === current ? 'filled' : 'outlined'}
                      onClick={groups.includes(g) ? () => { setGroup(g) } : undefined}
                    />
                  ))}
                  {!usable && <Typography variant='caption' color='warning.main'>{t('pricing.unavailable', { group: current })}</Typography>}
                </Stack>
              </TableCell>
            </TableRow>
          )
        })}
      </PagedTable>
    </Stack>
  )
}

function RatioBadge ({ ratio, label }: { ratio: number, label: string }) {
  const colour = ratioColour(ratio)
  return (
    <Box
      component='span'
      aria-label={label}
      data-colour={colour}
      sx={{
        px: 0.75,
        borderRadius: 1,
        fontSize: '0.75rem',
        lineHeight: 1.6,
        // Ratio 1 or less is unremarkable: an outline that also reads on a selected (primary) chip.
        ...(colour === 'default'
          ? { color: 'inherit', border: 1, borderColor: 'currentColor' }
          : { color: `${colour}.contrastText`, bgcolor: `${colour}.main` })
      }}
    >
      ×{ratio}
    </Box>
  )
}
