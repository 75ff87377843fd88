import type { OptionValues } from '@modelgate/contracts'
import { type Database, deleteLogsBefore, dropAuditLogsBefore, type Kysely } from '@modelgate/db'

export async function run (deps: { db: Kysely<Database>, options: () => Promise<OptionValues>, now?: () => number }): Promise<{ removed: number, auditRemoved: number }> {
  const options = await deps.options()
  const days = Math.trunc(options.num('LogRetentionDays'))
  const auditDays = Math.trunc(options.num('AuditLogRetentionDays'))
  const now = deps.now?.() ?? Math.floor(Date.now() / 1000)
  const removed = days <= 0 ? 0 : await deleteLogsBefore(deps.db, now - days * 86_400)
  const auditRemoved = auditDays <= 0 ? 0 : await dropAuditLogsBefore(deps.db, now - auditDays * 86_400)
  return { removed, auditRemoved }
}
