import Box from '@mui/material/Box'
import Checkbox from '@mui/material/Checkbox'
import LinearProgress from '@mui/material/LinearProgress'
import Paper from '@mui/material/Paper'
import type { SxProps, Theme } from '@mui/material/styles'
import Table from '@mui/material/Table'
import TableBody from '@mui/material/TableBody'
import TableCell from '@mui/material/TableCell'
import TableContainer from '@mui/material/TableContainer'
import TableHead from '@mui/material/TableHead'
import TablePagination from '@mui/material/TablePagination'
import TableRow from '@mui/material/TableRow'
import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { HeadCells } from './columns'
import { type Column, columnPlacement, shownColumns } from '../lib/columns'
import { PAGE_SIZES } from '../lib/usePersistentState'
import type { Selection } from '../lib/useSelection'

export interface Paging {
  total: number
  /** 1-based. */
  page: number
  size: number
  onPage: (page: number) => void
  /** A new page size; the table then asks for page 1. */
  onSize: (size: number) => void
}

export interface PagedTableProps {
  ariaLabel?: string
  testId?: string
  loading: boolean
  /** The header (those with when: false left out). */
  columns: readonly Column[]
  /** The rows. */
  children: ReactNode
  /** Shows `emptyText` in one row across the columns. */
  empty: boolean
  emptyText: ReactNode
  paging: Paging
  containerSx?: SxProps<Theme>
}

/**
 * A table of one page of rows with the page size choices of docs/domain.md. It scrolls sideways
 * inside its own box, so a wide table never makes the page wider than the window; a sticky column
 * (the row actions) stays in view meanwhile, and secondary columns show from their width up.
 */
export function PagedTable ({ ariaLabel, testId, loading, columns, children, empty, emptyText, paging, containerSx }: PagedTableProps) {
  const { t } = useTranslation()
  return (
    <Paper sx={{ minWidth: 0, overflow: 'hidden' }}>
      {/* The bar's room is kept while idle, so the rows do not move as loads start and end. */}
      {loading ? <LinearProgress /> : <Box sx={{ height: 4 }} />}
      <TableContainer sx={containerSx}>
        <Table size='small' aria-label={ariaLabel} data-testid={testId} sx={columnPlacement(columns)}>
          <TableHead>
            <TableRow><HeadCells columns={columns} /></TableRow>
          </TableHead>
          <TableBody>
            {children}
            {empty && (
              <TableRow>
                <TableCell colSpan={shownColumns(columns).length} align='center' sx={{ py: 4, color: 'text.secondary' }}>{emptyText}</TableCell>
              </TableRow>
            )}
          </TableBody>
        </Table>
      </TableContainer>
      <TablePagination
        component='div'
        count={paging.total}
        page={Math.max(0, paging.page - 1)}
        rowsPerPage={paging.size}
        rowsPerPageOptions={PAGE_SIZES}
        onPageChange={(_e, p) => { paging.onPage(p + 1) }}
        onRowsPerPageChange={(e) => {
          paging.onSize(Number(e.target.value))
          paging.onPage(1)
        }}
        labelRowsPerPage={t('common.rowsPerPage')}
        labelDisplayedRows={({ from, to, count }) => t('common.displayedRows', { from, to, count })}
        sx={{ overflowX: 'auto' }}
      />
    </Paper>
  )
}

/** The header cell whose checkbox selects every row shown, or clears them when all are selected. */
export function SelectAllCell<K> ({ selection, shown, label }: { selection: Selection<K>, shown: readonly K[], label: string }) {
  const all = shown.length > 0 && shown.every((k) => selection.selected.has(k))
  const some = !all && shown.some((k) => selection.selected.has(k))
  return (
    <TableCell padding='checkbox'>
      <Checkbox checked={all} indeterminate={some} onChange={() => { selection.toggleAll(shown) }} slotProps={{ input: { 'aria-label': label } }} />
    </TableCell>
  )
}
