/** What a spreadsheet may read as a formula when a cell starts with it (OWASP CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/

/**
 * A value written to a file users open in a spreadsheet (code lists, CSV): one that could start a
 * formula is prefixed with `'`, which spreadsheets show as text; anything else is unchanged.
 */
export function neutralizeCell (value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value
}

/** One CSV field: neutralised, and quoted when it holds a comma, quote or line break. */
export function csvField (value: string): string {
  const safe = neutralizeCell(value)
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}
