import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PagingQuery } from '@modelgate/contracts'

/** The paging fields of a list's query string (see PagingQuery in the contracts). */
export const PageQuery = PagingQuery.properties

// Keeps the row offset a number Postgres takes (page * size well inside bigint).
const MAX_PAGE = 10_000_000

type PageValue = number | string | undefined

/** The paging fields as validated: a number, or text that is no integer. */
export interface PageParams { p?: PageValue, page_size?: PageValue, ps?: PageValue, size?: PageValue }

const numberOf = (v: PageValue): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/**
 * The page a list query asks for, as new-api reads it: `p` below 1 is page 1; the size is
 * `page_size`, else `ps`, else `size`, clamped to 1..100; text that is no integer counts as unsent.
 */
export function pageOf (q: PageParams): { page: number, pageSize: number, offset: number } {
  const page = Math.min(Math.max(numberOf(q.p) ?? 1, 1), MAX_PAGE)
  const asked = numberOf(q.page_size) ?? numberOf(q.ps) ?? numberOf(q.size) ?? DEFAULT_PAGE_SIZE
  const pageSize = Math.min(Math.max(asked, 1), MAX_PAGE_SIZE)
  return { page, pageSize, offset: (page - 1) * pageSize }
}
