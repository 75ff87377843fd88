import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ClassifiedFailure, UpstreamRequest } from '../core/adaptor.js'
import { isRecord, list, parseJson, str } from '../core/json.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'
import { bearerHeaders, classifyOpenAIFailure } from '../openai-compatible/index.js'
import { withOverrides } from '../core/overrides.js'
import type { TaskPollProtocol, TaskReport } from './types.js'

/** The two Suno submissions: music (a song, two clips) and lyrics. */
export type SunoKind = 'music' | 'lyrics'

/** Per kind: the model it is routed and billed as (ModelPrice) and the task's stored action. */
export const SUNO_KINDS: Readonly<Record<SunoKind, { model: string, action: string }>> = {
  music: { model: 'suno_music', action: 'MUSIC' },
  lyrics: { model: 'suno_lyrics', action: 'LYRICS' }
}

/** `tasks.platform` of Suno tasks. */
export const SUNO_PLATFORM = 'suno'

/** The task statuses Suno-API reports; any other word is stored as UNKNOWN. */
const SUNO_STATUSES: ReadonlySet<string> = new Set(['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE'])

/** Whether channels of `type` speak Suno-API (a self-hosted server, so no default base URL). */
export function sunoSupported (type: number): boolean {
  return type === CHANNEL_TYPE.suno
}

function sunoUrl (channel: ChannelConfig, path: string): string {
  return `${resolveBaseUrl(channel, '')}${path}`
}

function jsonPost (channel: ChannelConfig, path: string, body: unknown): UpstreamRequest {
  const headers = { ...bearerHeaders(channel), 'Content-Type': 'application/json', Accept: 'application/json' }
  return withOverrides(channel, { method: 'POST', url: sunoUrl(channel, path), headers, body: JSON.stringify(body) })
}

/**
 * `POST {base}/suno/submit/{music|lyrics}` with the client's JSON body passed through untouched
 * (music: prompt, mv, title, tags, continue_at, continue_clip_id, gpt_description_prompt,
 * make_instrumental; lyrics: prompt), the channel's key as a Bearer token.
 */
export function sunoSubmitRequest (channel: ChannelConfig, kind: SunoKind, body: Readonly<Record<string, unknown>>): UpstreamRequest {
  return jsonPost(channel, `/suno/submit/${kind}`, body)
}

/** `POST {base}/suno/fetch {ids, action:""}`: the tasks among `ids`, of any action. */
function sunoFetchRequest (channel: ChannelConfig, ids: readonly string[]): UpstreamRequest {
  return jsonPost(channel, '/suno/fetch', { ids: [...ids], action: '' })
}

/** What a submit answer says: the upstream task id, or a refusal classified for failover. */
type SunoSubmitAnswer =
  | { accepted: true, taskId: string }
  | { accepted: false, failure: ClassifiedFailure }

/**
 * Reads a submit answer: HTTP 200 with `{code:"success", data:"<task id>"}` is an accepted task.
 * Anything else is refused, classified as OpenAI-compatible answers are (Suno-API's
 * `{code, message}` reads the same way): 408, 429 and 5xx try another channel, 401, 402, 403 and
 * exhausted accounts disable the channel, other 4xx are the client's. A 200 whose code is not
 * success is the upstream refusing the request itself: classified as a 400.
 */
export function readSunoSubmit (status: number, body: Buffer): SunoSubmitAnswer {
  const text = body.toString('utf8')
  const json = parseJson(text)
  if (status >= 200 && status < 300 && isRecord(json)) {
    const taskId = str(json.data)
    if (json.code === 'success' && taskId !== undefined && taskId !== '') return { accepted: true, taskId }
    const failure = classifyOpenAIFailure(400, text)
    if (str(json.message) === undefined || json.message === '') failure.message = 'the Suno upstream did not accept the task'
    return { accepted: false, failure }
  }
  return { accepted: false, failure: classifyOpenAIFailure(status < 400 ? 502 : status, text) }
}

/** A Suno-API status word in the task table's terms (upper case; unknown words: UNKNOWN). */
function sunoStatus (value: unknown): string {
  const word = typeof value === 'string' ? value.trim().toUpperCase() : ''
  return SUNO_STATUSES.has(word) ? word : 'UNKNOWN'
}

const seconds = (value: unknown): number | undefined => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN
  if (!Number.isFinite(n) || n <= 0) return undefined
  // Some servers report milliseconds; the row holds unix seconds.
  return Math.floor(n > 1e11 ? n / 1000 : n)
}

/**
 * One task of a fetch answer as a report: status, progress (the upstream's, else 100% on
 * success), the fail reason, and the columns to write: start and finish times and `data` (the
 * clips or the lyrics, as JSON text for the jsonb column).
 */
function sunoTaskReport (task: Readonly<Record<string, unknown>>): TaskReport | undefined {
  const upstreamId = str(task.task_id) ?? str(task.id)
  if (upstreamId === undefined || upstreamId === '') return undefined
  const status = sunoStatus(task.status)
  const fields: Record<string, unknown> = {}
  const start = seconds(task.start_time)
  const finish = seconds(task.finish_time)
  if (start !== undefined) fields.start_time = start
  if (finish !== undefined) fields.finish_time = finish
  if (task.data !== undefined && task.data !== null) fields.data = JSON.stringify(task.data)
  const report: TaskReport = { upstreamId, status, fields }
  const progress = str(task.progress)
  if (progress !== undefined && progress !== '') report.progress = progress
  else if (status === 'SUCCESS') report.progress = '100%'
  if (status === 'FAILURE') report.failReason = str(task.fail_reason) || 'the Suno task failed'
  return report
}

/**
 * How the billing worker polls Suno channels: one `POST /suno/fetch` per channel for up to 50
 * tasks. An answer that is not `{code:"success", data:[...]}` reports nothing (asked again next
 * round); tasks the answer leaves out are left as they are.
 */
export const sunoPoll: TaskPollProtocol = {
  table: 'tasks',
  platform: SUNO_PLATFORM,
  batch: 50,
  pollRequests: (channel, upstreamIds) => upstreamIds.length === 0 ? [] : [sunoFetchRequest(channel, upstreamIds)],
  readPoll: (status, body, upstreamIds) => {
    if (status !== 200) return []
    const json = parseJson(body.toString('utf8'))
    if (!isRecord(json) || json.code !== 'success') return []
    const asked = new Set(upstreamIds)
    const tasks = Array.isArray(json.data) ? json.data : [json.data]
    const reports: TaskReport[] = []
    for (const task of list(tasks)) {
      if (!isRecord(task)) continue
      const report = sunoTaskReport(task)
      if (report !== undefined && asked.has(report.upstreamId)) reports.push(report)
    }
    return reports
  }
}
