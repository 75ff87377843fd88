import { type Database, ensureAuditLogPartitions, ensureLogPartitions, type Kysely } from '@modelgate/db'
import type { Job } from 'bullmq'

export interface LogPartitionsDeps {
  db: Kysely<Database>
  now?: () => Date
}

/** Returns how many partitions were created (logs, and audit_logs apart). */
export async function run (_job: Pick<Job, 'id'>, deps: LogPartitionsDeps): Promise<{ created: number, audit: number }> {
  const now = deps.now?.() ?? new Date()
  const created = await ensureLogPartitions(deps.db, now)
  const audit = await ensureAuditLogPartitions(deps.db, now)
  return { created, audit }
}
