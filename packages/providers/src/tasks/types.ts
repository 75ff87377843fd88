import type { ChannelConfig, UpstreamRequest } from '../core/adaptor.js'

/**
 * What an upstream reports of one task when polled, in the row's terms: its status (the task
 * table's own status words: SUBMITTED, IN_PROGRESS, MODAL, SUCCESS, FAILURE, ...), progress, and
 * the columns to write (image_url, buttons, data, start/finish times, ...). A FAILURE carries the
 * upstream's reason; the poller refunds it (failAndRefundTask).
 */
export interface TaskReport {
  upstreamId: string
  status: string
  progress?: string
  failReason?: string
  /** Row columns to write besides status and progress (never the billing columns). */
  fields: Record<string, unknown>
}

/**
 * How the billing worker polls one task protocol: the requests that ask a channel about some of
 * its unfinished tasks (one batch request, or one per task), and how their answers read. Tasks the
 * answers do not mention are left as they are (asked again next round).
 */
export interface TaskPollProtocol {
  /** The task table and `platform` (tasks table only) the protocol's tasks live in. */
  table: 'midjourneys' | 'tasks'
  platform?: string
  /** Largest number of tasks asked about in one request. */
  batch: number
  pollRequests: (channel: ChannelConfig, upstreamIds: readonly string[]) => UpstreamRequest[]
  /** Reads one poll answer (status and body); `upstreamIds` are those its request asked about. */
  readPoll: (status: number, body: Buffer, upstreamIds: readonly string[]) => TaskReport[]
}
