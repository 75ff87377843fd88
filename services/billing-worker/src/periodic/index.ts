import type { Queue } from 'bullmq'
import { logPartitionsJob } from '../jobs/log-partitions/definition.js'

/**
 * Registers the repeating jobs. Job schedulers are keyed by id in Redis, so every worker replica
 * may call this at start without creating duplicates. An `every` scheduler also runs once at once.
 */
export async function schedulePeriodicJobs (maintenance: Queue): Promise<void> {
  await maintenance.upsertJobScheduler(
    logPartitionsJob.name,
    { every: logPartitionsJob.everyMs },
    { name: logPartitionsJob.name, opts: { attempts: logPartitionsJob.attempts, backoff: logPartitionsJob.backoff, removeOnComplete: 100, removeOnFail: 500 } }
  )
}
