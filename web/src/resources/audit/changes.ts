import type { AuditChange } from '@modelgate/contracts'

/** One changed field as the detail view lists it: each side as text, or undefined when absent. */
export interface ChangeLine {
  field: string
  before: string | undefined
  after: string | undefined
}

/** A side as text: strings as they are, anything else as compact JSON. */
export function sideText (value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** The lines of an entry's changes, by field name. */
export function changeLines (changes: Record<string, AuditChange>): ChangeLine[] {
  return Object.keys(changes).sort().map((field) => {
    const c = changes[field]!
    return {
      field,
      before: 'before' in c ? sideText(c.before) : undefined,
      after: 'after' in c ? sideText(c.after) : undefined
    }
  })
}
