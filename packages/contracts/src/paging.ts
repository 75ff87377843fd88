import Type, { type Static } from 'typebox'

// A number where one is sent; anything else (`p=abc`, `p=1.5`) is kept as text and means "the
// default", as new-api reads it, rather than refusing the whole list.
const PageNumber = Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 32 })]))

/**
 * Paging of every console list, as new-api and one-api clients send it: `p` is 1-based and any
 * value below 1 (their clients send `p=0` for the first page) means page 1; the page size is
 * `page_size`, else `ps`, else `size` (default 20), clamped to 1..100. Out-of-range values are
 * clamped, never refused.
 */
export const PagingQuery = Type.Object({
  p: PageNumber,
  page_size: PageNumber,
  ps: PageNumber,
  size: PageNumber
})
export type PagingQuery = Static<typeof PagingQuery>

/** Page size when none (or no number) is sent. */
export const DEFAULT_PAGE_SIZE = 20
/** Largest page size; larger ones are clamped to it. */
export const MAX_PAGE_SIZE = 100
