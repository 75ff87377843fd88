import type { ReactElement } from 'react'

/** A list's column: a header text (an i18n key), or a header cell of its own (a select-all checkbox, say). */
export type Column = ({ label: string, nowrap?: boolean, align?: 'right' } | { cell: ReactElement }) & {
  /** false leaves the column out (the admins' columns, say). */
  when?: boolean
  /**
   * The column shows from this window width up only (a secondary field: the rows must show it
   * elsewhere too, in their expandable details, say). Columns without it always show.
   */
  from?: 'sm' | 'md' | 'lg' | 'xl'
  /** The column stays in view at the table's right edge while the rest scrolls sideways under it (the row actions). */
  sticky?: boolean
}

/** The columns shown. */
export const shownColumns = (columns: readonly Column[]): Column[] => columns.filter((c) => c.when !== false)

/**
 * The table styles that place the shown columns as their `from` and `sticky` say, by position:
 * the header cells and every body row's cells, except a row whose one cell spans the table
 * (an empty list's note, a row's expanded details).
 */
export function columnPlacement (columns: readonly Column[]): Record<string, unknown> {
  const sx: Record<string, unknown> = {}
  shownColumns(columns).forEach((c, i) => {
    const at = `& > thead > tr > th:nth-of-type(${i + 1}), & > tbody > tr > td:nth-of-type(${i + 1}):not([colspan])`
    const style: Record<string, unknown> = {}
    if (c.from !== undefined) style.display = { xs: 'none', [c.from]: 'table-cell' }
    if (c.sticky === true) {
      Object.assign(style, { position: 'sticky', right: 0, zIndex: 1, bgcolor: 'background.paper', boxShadow: (theme: { palette: { divider: string } }) => `inset 1px 0 0 ${theme.palette.divider}` })
    }
    if (Object.keys(style).length > 0) sx[at] = style
  })
  return sx
}
