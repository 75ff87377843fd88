import type { OptionValues } from '@modelgate/contracts'
import { type Database, deleteLogsBefore, type Kysely } from '@modelgate/db'

export async function run (deps: { db: Kysely<Database>, options: () => Promise<OptionValues>, now?: () => number }): Promise<{ removed: number }> {
  const days = Math.trunc((await deps.options()).num('LogRetentionDays'))
  if (days <= 0) return { removed: 0 }
  const now = deps.now?.() ?? Math.floor(Date.now() / 1000)
  return { removed: await deleteLogsBefore(deps.db, now - days * 86_400) }
}
