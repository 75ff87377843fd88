import type { Queue } from 'bullmq'
import { channelTestsJob } from '../jobs/channel-tests/definition.js'
import { logPartitionsJob } from '../jobs/log-partitions/definition.js'
import { logRetentionJob } from '../jobs/log-retention/definition.js'
import { pruneSettlementsJob } from '../jobs/prune-settlements/definition.js'
import { reconcileBalancesJob } from '../jobs/reconcile-balances/definition.js'
import { subscriptionsJob } from '../jobs/subscriptions/definition.js'

/**
 * Registers the repeating jobs. Job schedulers are keyed by id in Redis, so every worker replica
 * may call this at start without creating duplicates. An `every` scheduler also runs once at once.
 */
export async function schedulePeriodicJobs (maintenance: Queue, channelTestEveryMs: number, reconcileEveryMs: number = reconcileBalancesJob.everyMs): Promise<void> {
  for (const job of [logPartitionsJob, logRetentionJob, { ...reconcileBalancesJob, everyMs: reconcileEveryMs }, pruneSettlementsJob, subscriptionsJob, { ...channelTestsJob, everyMs: channelTestEveryMs }]) {
    await maintenance.upsertJobScheduler(
      job.name,
      { every: job.everyMs },
      { name: job.name, opts: { attempts: job.attempts, backoff: job.backoff, removeOnComplete: 100, removeOnFail: 500 } }
    )
  }
}
