import type { NewMidjourney, NewTask, TaskTable } from '@modelgate/db'
import { costOf } from '@modelgate/pricing'
import { type ChannelConfig, type ClassifiedFailure, cleanUpstreamMessage, type UpstreamRequest } from '@modelgate/providers'
import type { FastifyRequest } from 'fastify'
import { admissionLimits, admit, modelPrice } from '../relay/admission.js'
import { ChannelAttempts, TIMED_OUT, upstreamReport } from '../relay/attempts.js'
import { type Caller, checkModel, payer } from '../relay/auth.js'
import type { Entitlement } from '../relay/callers.js'
import type { RelayDeps } from '../relay/deps.js'
import { channelConfig, type RelayChannel } from '../relay/state.js'
import { ClientGone, isTimeout, readAll, send } from '../relay/upstream.js'
import { type UsageRecord, usageEvent } from '../relay/usage-event.js'

/** The largest submit answer read from an upstream (a task id and a few fields). */
const MAX_SUBMIT_ANSWER = 4 * 1024 * 1024

/** An answer for the client: an HTTP status and a JSON body in the task protocol's own shape. */
export interface TaskAnswer {
  status: number
  body: unknown
}

/** What the upstream said to a submit, as the task protocol reads it. */
export type SubmitResult =
  /** The task exists upstream (the charge stands): its id, the client's answer, the row's own columns. */
  | { accepted: true, upstreamId: string, answer: TaskAnswer, row: Record<string, unknown> }
  /** Refused: `failure` says whether another channel may take it (retry), the channel is dead (disable) or the client erred (client). */
  | { accepted: false, answer: TaskAnswer, failure: ClassifiedFailure }

/** One task submission: what it is billed as, where it may go, how the upstream is called and read. */
export interface TaskSubmission {
  table: TaskTable
  /** Routed and billed as this model (its ModelPrice, times the group ratio). */
  model: string
  /** How many of the model's price units the task is (a video's seconds); 1 when absent. */
  units?: number
  /** The task's action as stored (IMAGINE, MUSIC, generate, ...). */
  action: string
  /** `tasks.platform` (suno, video); unused for drawing tasks. */
  platform?: string
  /** Channel types that speak the protocol; others are passed over. */
  accepts: (type: number) => boolean
  /** The only channel to use (an action on an existing task goes where the task is). */
  channel?: RelayChannel
  /** The upstream call for one channel, given the channel's name for the model (its model mapping applied). */
  request: (channel: ChannelConfig, upstreamModel: string) => UpstreamRequest | Promise<UpstreamRequest>
  /** Reads the upstream's answer. */
  read: (status: number, body: Buffer) => SubmitResult
}

/** What a task submission ended as, for the route to answer with. */
export type SubmitOutcome =
  | { accepted: true, answer: TaskAnswer, upstreamId: string, channelId: number, quota: number }
  | { accepted: false, answer: TaskAnswer }

/**
 * Submits one asynchronous task: the caller's model and group checks, the fixed price (ModelPrice
 * x group ratio x units) reserved like any relay request, the upstream call with failover, and exactly one
 * usage event: the charge when an upstream accepted the task (with the task's row written for
 * the pollers and the owner's queries), nothing when none did. A refund later, if the task
 * fails, is a settlement of its own (failAndRefundTask, by task id).
 */
export async function submitTask (deps: RelayDeps, req: FastifyRequest, caller: Caller, t: TaskSubmission): Promise<SubmitOutcome> {
  const startedAt = Date.now()
  const { state } = deps
  checkModel(caller, t.model, state.usableGroups)
  const group = caller.group
  if (t.channel === undefined) state.checkServes(group, t.model)
  const price = modelPrice(state, t.model, group, 'per_call')
  const quota = costOf(price, { promptTokens: 0, completionTokens: 0 }) * (t.units ?? 1)
  const { lease, paidBy } = await admit(deps, req, caller, { requestId: req.id, amount: quota, limits: admissionLimits(caller, 0), group, model: t.model })

  // Admitted: exactly one usage event from here on.
  deps.usage.expect()
  // Names the accepting channel, else the last one tried; the model sent upstream once one accepted.
  const record: UsageRecord = { requestId: req.id, startedAt, caller, model: t.model, group, ip: req.ip, stream: false, price, reserved: quota, upstreamModel: t.model, tried: [], firstByteAt: 0, paidBy }
  let accepted = false
  try {
    const attempts = new ChannelAttempts(deps, { group, model: t.model, pinned: t.channel, promptTokens: 0, accepts: t.accepts }, record.tried)
    const gone = new ClientGone()
    for (let channel = attempts.next(); channel !== undefined; channel = attempts.next()) {
      record.channel = channel
      const key = attempts.takeKey()
      if (key === undefined) continue
      const config = channelConfig(channel, key)
      const upstreamModel = channel.modelMapping[t.model] ?? t.model
      const request = await t.request(config, upstreamModel)
      let status: number
      let body: Buffer
      try {
        const res = await send(request, gone, { idleMs: deps.upstreamTimeoutMs }, deps.outbound.dispatcher(channel.proxyUrl))
        status = res.status
        body = await readAll(res, MAX_SUBMIT_ANSWER)
      } catch (err) {
        req.log.warn({ err, channel: channel.id }, 'task upstream unreachable')
        attempts.failed(isTimeout(err) ? TIMED_OUT : { status: 502, message: 'upstream unreachable', type: 'upstream_error', code: 'upstream_unreachable' })
        continue
      }
      const result = t.read(status, body)
      if (result.accepted) {
        accepted = true
        record.upstreamModel = upstreamModel
        await recordTask(deps, req, caller, t, { channel, upstreamId: result.upstreamId, quota, row: result.row, submitTime: Math.floor(startedAt / 1000), paidBy })
        return { accepted: true, answer: result.answer, upstreamId: result.upstreamId, channelId: channel.id, quota }
      }
      req.log.warn({ channel: channel.id, status, action: result.failure.action }, 'task upstream refused')
      if (await attempts.refused(status, result.failure) === 'client') {
        const message = cleanUpstreamMessage(result.failure.message)
        record.error = { status, message, upstream: upstreamReport(status, message, result.failure.code) }
        return { accepted: false, answer: result.answer }
      }
    }
    throw attempts.finalError(record, req.id)
  } finally {
    if (lease !== undefined) deps.quota.release(lease, 0)
    void deps.usage.publish(usageEvent(record, accepted ? 'success' : 'failed', accepted ? quota : 0, undefined, 'none'))
  }
}

/**
 * Writes the accepted task's row: who pays (and the entitlement item, when one did), what was
 * charged and the charge's request id (for the refund), the channel that holds it upstream, and the protocol's own columns. A row that
 * cannot be written is logged: the upstream runs the task and the charge stands either way.
 */
async function recordTask (deps: RelayDeps, req: FastifyRequest, caller: Caller, t: TaskSubmission, r: { channel: RelayChannel, upstreamId: string, quota: number, row: Record<string, unknown>, submitTime: number, paidBy: Entitlement | undefined }): Promise<void> {
  const billing = {
    subscription_item_id: r.paidBy?.itemId ?? null,
    ...payer(caller),
    channel_id: r.channel.id,
    model_name: t.model,
    group: caller.group,
    request_id: req.id,
    quota: r.quota,
    action: t.action,
    submit_time: r.submitTime
  }
  try {
    if (t.table === 'midjourneys') {
      await deps.db.insertInto('midjourneys').values({ status: 'SUBMITTED', progress: '0%', ...r.row, ...billing, mj_id: r.upstreamId } as NewMidjourney).execute()
    } else {
      await deps.db.insertInto('tasks').values({ status: 'SUBMITTED', progress: '0%', ...r.row, ...billing, task_id: r.upstreamId, platform: t.platform ?? '' } as NewTask).execute()
    }
  } catch (err) {
    req.log.error({ err, task: r.upstreamId, channel: r.channel.id }, 'the accepted task could not be recorded')
  }
}
