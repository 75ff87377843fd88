import { bullConnection, publishConfigChange, SecretBox } from '@modelgate/service'
import { type Job, Queue, UnrecoverableError, Worker } from 'bullmq'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { OptionValues } from '@modelgate/contracts'
import { sendMail, smtpSettingsFrom } from '@modelgate/mail'
import { findAllOptions, type SettlementInput } from '@modelgate/db'
import { TASK_POLL_PROTOCOLS } from '@modelgate/providers'
import { QuotaStore } from '@modelgate/quota'
import { logPartitionsJob } from './jobs/log-partitions/definition.js'
import { logRetentionJob } from './jobs/log-retention/definition.js'
import { run as runLogRetention } from './jobs/log-retention/handler.js'
import { channelTestsJob } from './jobs/channel-tests/definition.js'
import { run as runChannelTests } from './jobs/channel-tests/handler.js'
import { pruneSettlementsJob } from './jobs/prune-settlements/definition.js'
import { run as runPrune } from './jobs/prune-settlements/handler.js'
import { reconcileBalancesJob } from './jobs/reconcile-balances/definition.js'
import { run as runReconcile } from './jobs/reconcile-balances/handler.js'
import { cappedBackoff, settleUsageJob } from './jobs/settle-usage/definition.js'
import { subscriptionsJob } from './jobs/subscriptions/definition.js'
import { run as runSubscriptionPeriods } from './jobs/subscriptions/handler.js'
import { SettlementBatcher } from './jobs/settle-usage/batcher.js'
import { run as runSettleUsage } from './jobs/settle-usage/handler.js'
import { run as runLogPartitions } from './jobs/log-partitions/handler.js'
import { taskLeaseMs, taskPollJob } from './jobs/task-poll/definition.js'
import { run as runTaskPoll } from './jobs/task-poll/handler.js'
import { schedulePeriodicJobs } from './periodic/index.js'
import { channelsAutoDisabled, eventsFailed, reconcileCorrections, setUsageQueueCounts, tasksPolled, tasksRefunded } from './metrics.js'

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

declare module 'fastify' {
  interface FastifyInstance {
    maintenance: { queue: Queue, worker: Worker }
    settlement: { worker: Worker }
    tasks: { queue: Queue, worker: Worker }
  }
}

export interface WorkerPluginOptions {
  redisUrl: string
  /** ioredis keyPrefix (pub/sub channel names carry it). */
  keyPrefix: string
  cryptoSecret: string
  channelTestEveryMs: number
  /** Job lock; a job held by a killed worker returns to the queue after about this long. */
  lockMs: number
  /** BullMQ key prefix (its own, separate from ioredis' keyPrefix). */
  prefix: string
  /** Reconciliation interval; its definition's when absent. */
  reconcileEveryMs?: number
  /** The longest a relay request may run: older reservations are settled as orphans (see reconcile-balances). */
  orphanAfterMs?: number
  /** How often unfinished tasks are polled upstream. */
  taskPollEveryMs?: number
  /** A task unfinished this long after its submit is failed and refunded. */
  taskTimeoutMs?: number
}

/**
 * Runs the BullMQ workers inside the service. On close, workers stop taking jobs and finish the
 * current one before connections close.
 */
export default fp(async (app: FastifyInstance, opts: WorkerPluginOptions) => {
  const connection = bullConnection(opts.redisUrl)
  const quota = new QuotaStore(app.redis)
  const box = new SecretBox(opts.cryptoSecret)
  const queue = new Queue(logPartitionsJob.queue, { connection, prefix: opts.prefix })
  const usageQueue = new Queue(settleUsageJob.queue, { connection, prefix: opts.prefix })
  const usageBacklog = async (): Promise<number> => {
    const counts = await usageQueue.getJobCounts('wait', 'active', 'delayed', 'prioritized')
    return Object.values(counts).reduce((sum, n) => sum + n, 0)
  }
  const worker = new Worker(logPartitionsJob.queue, async (job: Job) => {
    switch (job.name) {
      case logPartitionsJob.name:
        return await runLogPartitions(job, { db: app.db })
      case reconcileBalancesJob.name: {
        const result = await runReconcile({ db: app.db, quota, usageBacklog, ...(opts.orphanAfterMs === undefined ? {} : { orphanAfterMs: opts.orphanAfterMs }) })
        reconcileCorrections.inc({ kind: 'repaired' }, result.repaired)
        reconcileCorrections.inc({ kind: 'orphan' }, result.orphans)
        return result
      }
      case pruneSettlementsJob.name:
        return await runPrune({ db: app.db })
      case subscriptionsJob.name:
        return await runSubscriptionPeriods({
          db: app.db, quota, options, announce: async (userId) => { await publishConfigChange({ db: app.db, redis: app.redis, keyPrefix: opts.keyPrefix }, { kind: 'user', id: userId }) }
        })
      case logRetentionJob.name:
        return await runLogRetention({ db: app.db, options })
      case channelTestsJob.name: {
        const result = await runChannelTests({ db: app.db, redis: app.redis, keyPrefix: opts.keyPrefix, box, options, log: app.log, outbound: app.outbound })
        channelsAutoDisabled.inc({ source: 'channel_test' }, result.disabled)
        return result
      }
      default:
        throw new UnrecoverableError(`unknown maintenance job ${job.name}`)
    }
  }, { connection, prefix: opts.prefix, concurrency: 1 })
  worker.on('failed', (job, err) => app.log.error({ err, job: job?.name, attempts: job?.attemptsMade }, 'maintenance job failed'))
  worker.on('completed', (job, result) => app.log.info({ job: job.name, result }, 'maintenance job done'))
  worker.on('error', (err) => app.log.warn({ err }, 'maintenance worker error'))

  let cachedOptions: { values: OptionValues, at: number } | undefined
  const options = async () => {
    if (cachedOptions === undefined || Date.now() - cachedOptions.at > 5_000) cachedOptions = { values: new OptionValues(await findAllOptions(app.db)), at: Date.now() }
    return cachedOptions.values
  }
  const remind = async (to: { email: string, username: string, quota: number }, o: OptionValues) => {
    const perUnit = o.num('QuotaPerUnit') > 0 ? o.num('QuotaPerUnit') : 500_000
    const system = o.str('SystemName')
    const balance = o.bool('DisplayInCurrencyEnabled') ? `$${(to.quota / perUnit).toFixed(2)}` : `${to.quota}`
    try {
      await sendMail({ ...smtpSettingsFrom(o), resolve: async (host) => await app.outbound.resolveAllowed(host) }, {
        to: to.email,
        subject: `${system}: your balance is low / 您的余额不足`,
        text: `Hello ${to.username}, your ${system} balance is ${balance}. Top up to keep your requests running.\n\n${to.username}，您好：您在 ${system} 的余额为 ${balance}，请及时充值，以免请求中断。`,
        html: `<p>Hello ${escapeHtml(to.username)}, your ${escapeHtml(system)} balance is ${balance}. Top up to keep your requests running.</p><p>${escapeHtml(to.username)}，您好：您在 ${escapeHtml(system)} 的余额为 ${balance}，请及时充值，以免请求中断。</p>`
      })
    } catch (err) {
      app.log.warn({ err, user: to.username }, 'low-balance reminder not sent')
    }
  }
  const batcher = new SettlementBatcher(app.db, settleUsageJob.batch)
  const settle = async (e: SettlementInput, writeLog: boolean) => await batcher.settle(e, writeLog)
  const settler = new Worker(settleUsageJob.queue, async (job: Job) => await runSettleUsage(job, { db: app.db, quota, options, remind, settle }),
    { connection, prefix: opts.prefix, concurrency: settleUsageJob.concurrency, lockDuration: opts.lockMs, stalledInterval: opts.lockMs, settings: { backoffStrategy: cappedBackoff } })
  settler.on('failed', (job, err) => {
    const events = (job?.data as { events?: unknown } | undefined)?.events
    const final = err.name === 'UnrecoverableError' || (job !== undefined && job.attemptsMade >= (job.opts.attempts ?? 1))
    eventsFailed.inc({ final: final ? 'yes' : 'no' }, Array.isArray(events) ? events.length : 1)
    app.log.error({ err, request_id: job?.id, attempts: job?.attemptsMade }, 'usage settlement failed')
  })
  setUsageQueueCounts(async () => await usageQueue.getJobCounts('wait', 'prioritized', 'active', 'delayed', 'failed'))
  settler.on('error', (err) => app.log.warn({ err }, 'settlement worker error'))

  // Task polling has a queue and worker of its own: a long channel test never holds it up.
  const taskQueue = new Queue(taskPollJob.queue, { connection, prefix: opts.prefix })
  const taskEveryMs = opts.taskPollEveryMs ?? 15_000
  const taskWorker = new Worker(taskPollJob.queue, async () => {
    const result = await runTaskPoll({
      db: app.db, quota, box, protocols: TASK_POLL_PROTOCOLS, timeoutMs: opts.taskTimeoutMs ?? 6 * 3_600_000, leaseMs: taskLeaseMs(taskEveryMs), outbound: app.outbound, log: app.log
    })
    tasksPolled.inc(result.polled)
    tasksRefunded.inc({ reason: 'failed' }, result.refunded)
    tasksRefunded.inc({ reason: 'timed_out' }, result.timedOut)
    return result
  }, { connection, prefix: opts.prefix, concurrency: 1, lockDuration: taskLeaseMs(taskEveryMs) })
  taskWorker.on('failed', (job, err) => app.log.error({ err, job: job?.name }, 'task poll failed'))
  taskWorker.on('error', (err) => app.log.warn({ err }, 'task worker error'))

  const schedule = async () => {
    await schedulePeriodicJobs(queue, opts.channelTestEveryMs, opts.reconcileEveryMs)
    await taskQueue.upsertJobScheduler(taskPollJob.name, { every: taskEveryMs },
      { name: taskPollJob.name, opts: { attempts: taskPollJob.attempts, removeOnComplete: 100, removeOnFail: 500 } })
  }
  app.addHook('onReady', schedule)
  // A Redis that came back empty (restarted, flushed) lost the job schedulers: registered again
  // on every reconnection (idempotent), or reconciliation and the other periodic jobs stop.
  let connectedOnce = app.redis.status === 'ready'
  const onRedisReady = () => {
    if (!connectedOnce) { connectedOnce = true; return }
    schedule().catch((err: unknown) => app.log.warn({ err }, 'periodic jobs not scheduled again after a Redis reconnection'))
  }
  app.redis.on('ready', onRedisReady)
  app.addHook('onClose', async () => { app.redis.off('ready', onRedisReady) })
  app.addHook('onClose', async () => {
    // close() waits for the jobs in hand to finish before returning.
    setUsageQueueCounts(undefined)
    await Promise.all([worker.close(), settler.close(), taskWorker.close()])
    await queue.close()
    await taskQueue.close()
    await usageQueue.close()
  })
  app.decorate('maintenance', { queue, worker })
  app.decorate('tasks', { queue: taskQueue, worker: taskWorker })
  app.decorate('settlement', { worker: settler })
}, { name: 'maintenance-worker', dependencies: ['db', 'redis'] })
