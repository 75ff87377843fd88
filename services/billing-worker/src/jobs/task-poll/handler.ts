import { type Channel, claimUnfinishedTasks, type Database, failAndRefundTask, type Kysely, releaseTaskClaims, type TaskRefund, type TaskTable, updateUnfinishedTask } from '@modelgate/db'
import { type Outbound, pollTasks, type TaskPollProtocol, type TaskReport } from '@modelgate/providers'
import type { QuotaStore } from '@modelgate/quota'
import { channelConfigOf, firstUsableKey, type SecretBox } from '@modelgate/service'
import type { FastifyBaseLogger } from 'fastify'
import { taskPollJob } from './definition.js'

export interface TaskPollDeps {
  db: Kysely<Database>
  quota: QuotaStore
  box: SecretBox
  protocols: readonly TaskPollProtocol[]
  /** A task unfinished this long (ms) after its submit is failed and refunded. */
  timeoutMs: number
  /** How long a claim holds (taskLeaseMs); each poll request gets at most half of it. */
  leaseMs: number
  outbound?: Outbound
  log: Pick<FastifyBaseLogger, 'warn'>
}

export interface TaskPollResult {
  polled: number
  updated: number
  succeeded: number
  refunded: number
  timedOut: number
}

/** What every unfinished task row has, whichever table it is in. */
interface PolledRow {
  id: number
  channel_id: number
  submit_time: number
  upstreamId: string
  platform: string
}

/** One round: claim, time out, ask each channel about its tasks, write what they report. */
export async function run (deps: TaskPollDeps, now = Date.now()): Promise<TaskPollResult> {
  const result: TaskPollResult = { polled: 0, updated: 0, succeeded: 0, refunded: 0, timedOut: 0 }
  for (const table of ['midjourneys', 'tasks'] as const) {
    const claimed = await claimUnfinishedTasks(deps.db, table, { now, leaseMs: deps.leaseMs, limit: taskPollJob.claim })
    if (claimed.length === 0) continue
    const rows: PolledRow[] = claimed.map((r) => ({
      id: r.id,
      channel_id: r.channel_id,
      submit_time: r.submit_time,
      upstreamId: 'mj_id' in r ? r.mj_id : r.task_id,
      platform: 'platform' in r ? r.platform : ''
    }))
    try {
      await pollTable(deps, table, rows, now, result)
    } finally {
      // Asked about (or given up on) this round: the next round may take them again.
      await releaseTaskClaims(deps.db, table, rows.map((r) => r.id))
    }
  }
  return result
}

async function pollTable (deps: TaskPollDeps, table: TaskTable, rows: readonly PolledRow[], now: number, result: TaskPollResult): Promise<void> {
  const live: PolledRow[] = []
  for (const row of rows) {
    if (row.submit_time * 1000 + deps.timeoutMs < now) {
      if (await refund(deps, table, row.id, `timed out: unfinished ${Math.round(deps.timeoutMs / 60_000)} minutes after submission`)) result.timedOut++
    } else {
      live.push(row)
    }
  }
  const byChannel = new Map<number, PolledRow[]>()
  for (const row of live) byChannel.set(row.channel_id, [...byChannel.get(row.channel_id) ?? [], row])
  const channels = byChannel.size === 0
    ? []
    : await deps.db.selectFrom('channels').selectAll().where('id', 'in', [...byChannel.keys()]).execute()
  for (const [channelId, tasks] of byChannel) {
    const channel = channels.find((c) => c.id === channelId)
    if (channel === undefined) {
      // Deleted: nothing can ever report on these tasks again.
      for (const t of tasks) if (await refund(deps, table, t.id, 'the channel of the task was deleted')) result.refunded++
      continue
    }
    for (const [platform, group] of byPlatform(tasks)) {
      const protocol = deps.protocols.find((p) => p.table === table && (p.platform ?? '') === platform)
      if (protocol === undefined) continue
      const config = channelConfig(deps, channel)
      if (config === undefined) continue
      const { reports, failures } = await pollTasks(protocol, config, group.map((t) => t.upstreamId), Math.min(taskPollJob.requestTimeoutMs, deps.leaseMs / 2))
      result.polled += group.length
      if (failures.length > 0) deps.log.warn({ channel: channel.id, failures: failures.slice(0, 3) }, 'task poll request failed')
      for (const report of reports) {
        const row = group.find((t) => t.upstreamId === report.upstreamId)
        if (row !== undefined) await apply(deps, table, row, report, result)
      }
    }
  }
}

function byPlatform (rows: readonly PolledRow[]): Map<string, PolledRow[]> {
  const out = new Map<string, PolledRow[]>()
  for (const row of rows) out.set(row.platform, [...out.get(row.platform) ?? [], row])
  return out
}

/** The channel's config with its first usable key; undefined when its keys cannot be opened. */
function channelConfig (deps: TaskPollDeps, channel: Channel) {
  try {
    return channelConfigOf(channel, firstUsableKey(channel, deps.box), deps.outbound === undefined ? {} : { outbound: deps.outbound })
  } catch {
    deps.log.warn({ channel: channel.id }, 'task poll: the channel key cannot be opened with CRYPTO_SECRET')
    return undefined
  }
}

/** Writes one report: a failure is refunded (once), anything else updates the unfinished row. */
async function apply (deps: TaskPollDeps, table: TaskTable, row: PolledRow, report: TaskReport, result: TaskPollResult): Promise<void> {
  if (report.status === 'FAILURE') {
    if (await refund(deps, table, row.id, report.failReason ?? 'the upstream reported a failure', { ...report.fields, ...(report.progress === undefined ? {} : { progress: report.progress }) })) result.refunded++
    return
  }
  const fields: Record<string, unknown> = { ...report.fields, status: report.status }
  if (report.progress !== undefined) fields['progress'] = report.progress
  if (report.status === 'SUCCESS' && fields['finish_time'] === undefined) fields['finish_time'] = Math.floor(Date.now() / 1000)
  if (await updateUnfinishedTask(deps.db, table, row.id, fields)) {
    result.updated++
    if (report.status === 'SUCCESS') result.succeeded++
  }
}

/**
 * Fails and refunds a task (exactly once: failAndRefundTask), then gives the amount back to the
 * balances the gateways spend from. Were the process to die between the two, reconciliation sets
 * those balances from Postgres.
 */
async function refund (deps: TaskPollDeps, table: TaskTable, id: number, reason: string, fields: Record<string, unknown> = {}): Promise<TaskRefund | undefined> {
  const refunded = await failAndRefundTask(deps.db, table, id, reason, fields)
  if (refunded === undefined || refunded.quota === 0) return refunded
  if (refunded.itemId === undefined) await deps.quota.adjust('user', refunded.user_id, refunded.quota)
  else await deps.quota.adjust('entitlement', refunded.itemId, refunded.itemAmount ?? 0, refunded.user_id)
  if (refunded.token_id > 0 && !refunded.unlimited_token) await deps.quota.adjust('token', refunded.token_id, refunded.quota, refunded.user_id)
  return refunded
}
