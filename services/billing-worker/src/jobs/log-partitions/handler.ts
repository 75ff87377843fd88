import { type Database, ensureLogPartitions, type Kysely } from '@modelgate/db'
import type { Job } from 'bullmq'

export interface LogPartitionsDeps {
  db: Kysely<Database>
  now?: () => Date
}

/** Returns how many partitions were created. */
export async function run (_job: Pick<Job, 'id'>, deps: LogPartitionsDeps): Promise<{ created: number }> {
  const created = await ensureLogPartitions(deps.db, deps.now?.() ?? new Date())
  return { created }
}
