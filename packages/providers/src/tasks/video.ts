import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ClassifiedFailure, UpstreamRequest } from '../core/adaptor.js'
import { isRecord, num, parseJson, str } from '../core/json.js'
import { JSON_CONTENT_TYPE, resolveBaseUrl } from '../openai-compatible/api.js'
import { classifyOpenAIFailure } from '../openai-compatible/index.js'
import { OPENAI_BASE_URL, openAIHeaders } from '../openai/api.js'
import { withOverrides } from '../core/overrides.js'
import type { TaskPollProtocol, TaskReport } from './types.js'

/**
 * Channel types that serve OpenAI's video API (`/v1/videos`): OpenAI and custom (any
 * OpenAI-compatible server, e.g. a relay). Azure's video API lives under other paths with
 * another auth header, and the other OpenAI-compatible types have no video API.
 */
const VIDEO_CHANNEL_TYPES: readonly number[] = [CHANNEL_TYPE.openai, CHANNEL_TYPE.custom]

/** `tasks.platform` of video tasks. */
export const VIDEO_PLATFORM = 'video'

/** The model a create without one gets (OpenAI's default). */
export const DEFAULT_VIDEO_MODEL = 'sora-2'

/** The content variants `GET /v1/videos/{id}/content` serves. */
export const VIDEO_VARIANTS: ReadonlySet<string> = new Set(['video', 'thumbnail', 'spritesheet'])

/** Whether channels of `type` can serve the video API. */
export function videoSupported (type: number): boolean {
  return VIDEO_CHANNEL_TYPES.includes(type)
}

/**
 * `{root}/v1/videos`: OpenAI's base (or the channel's); for custom channels, whose URL may be a
 * full endpoint (`https://host/api/v1/chat/completions`), the part up to its last `/v1`, else the
 * whole URL followed by `/v1`.
 */
function videosUrl (channel: ChannelConfig): string {
  const base = resolveBaseUrl(channel, channel.type === CHANNEL_TYPE.openai ? OPENAI_BASE_URL : '')
  const url = new URL(base)
  const path = url.pathname.replace(/\/+$/, '')
  const v1 = path.lastIndexOf('/v1')
  const root = v1 >= 0 && (path.length === v1 + 3 || path[v1 + 3] === '/') ? path.slice(0, v1 + 3) : `${path}/v1`
  return `${url.origin}${root}/videos`
}

/**
 * A create body: the client's JSON (unknown fields kept), or its multipart body as is with the
 * model it names (undefined: none).
 */
export type VideoCreateBody =
  | { json: Readonly<Record<string, unknown>> }
  | { raw: { contentType: string, data: Buffer, model: string | undefined } }

/**
 * `POST /v1/videos` with the channel's Bearer key (and OpenAI-Organization when set), the body's
 * model set to `model` (the channel's name for it, after its model mapping). A multipart body
 * whose model needs no change goes byte for byte; otherwise it is parsed and encoded again with
 * the model field replaced (files kept with their names and types).
 */
export async function videoCreateRequest (channel: ChannelConfig, body: VideoCreateBody, model: string): Promise<UpstreamRequest> {
  const headers: Record<string, string> = { ...openAIHeaders(channel), Accept: 'application/json' }
  if ('json' in body) {
    headers['Content-Type'] = JSON_CONTENT_TYPE
    return withOverrides(channel, { method: 'POST', url: videosUrl(channel), headers, body: JSON.stringify({ ...body.json, model }) })
  }
  const raw = body.raw.model === model ? body.raw : await withFormField(body.raw, 'model', model)
  headers['Content-Type'] = raw.contentType
  return withOverrides(channel, { method: 'POST', url: videosUrl(channel), headers, body: raw.data })
}

/** A multipart/form-data body with one field set to `value` (added when absent), encoded again. */
async function withFormField (raw: { contentType: string, data: Buffer }, name: string, value: string): Promise<{ contentType: string, data: Buffer }> {
  const form = await new Response(raw.data, { headers: { 'content-type': raw.contentType } }).formData()
  form.set(name, value)
  const encoded = new Response(form)
  return { contentType: encoded.headers.get('content-type') ?? raw.contentType, data: Buffer.from(await encoded.arrayBuffer()) }
}

/** `POST /v1/videos/{id}/remix` with the client's JSON body (`prompt`). */
export function videoRemixRequest (channel: ChannelConfig, id: string, body: Readonly<Record<string, unknown>>): UpstreamRequest {
  const headers = { ...openAIHeaders(channel), Accept: 'application/json', 'Content-Type': JSON_CONTENT_TYPE }
  return withOverrides(channel, { method: 'POST', url: `${videosUrl(channel)}/${encodeURIComponent(id)}/remix`, headers, body: JSON.stringify(body) })
}

/** `DELETE /v1/videos/{id}`: the video and its stored assets. */
export function videoDeleteRequest (channel: ChannelConfig, id: string): UpstreamRequest {
  const headers = { ...openAIHeaders(channel), Accept: 'application/json' }
  return withOverrides(channel, { method: 'DELETE', url: `${videosUrl(channel)}/${encodeURIComponent(id)}`, headers })
}

/** `GET /v1/videos/{id}`: the job's video object. */
function videoRetrieveRequest (channel: ChannelConfig, id: string): UpstreamRequest {
  const headers = { ...openAIHeaders(channel), Accept: 'application/json' }
  return withOverrides(channel, { method: 'GET', url: `${videosUrl(channel)}/${encodeURIComponent(id)}`, headers })
}

/** `GET /v1/videos/{id}/content[?variant=...]`: the rendered bytes. */
export function videoContentRequest (channel: ChannelConfig, id: string, variant?: string): UpstreamRequest {
  const headers = { ...openAIHeaders(channel), Accept: 'application/binary' }
  const query = variant === undefined ? '' : `?variant=${encodeURIComponent(variant)}`
  return withOverrides(channel, { method: 'GET', url: `${videosUrl(channel)}/${encodeURIComponent(id)}/content${query}`, headers })
}

/** What a create answer says: the job (its video object), or a refusal classified for failover. */
type VideoCreateAnswer =
  | { accepted: true, id: string, video: Readonly<Record<string, unknown>> }
  | { accepted: false, failure: ClassifiedFailure }

/**
 * Reads a create answer: a 2xx video object with an id is an accepted job; anything else is
 * refused, classified as OpenAI's errors are (408, 429, 5xx retry; 401, 402, 403 and exhausted
 * accounts disable; other 4xx are the client's). A 2xx without an id is treated as a bad gateway.
 */
export function readVideoCreate (status: number, body: Buffer): VideoCreateAnswer {
  const text = body.toString('utf8')
  if (status >= 200 && status < 300) {
    const json = parseJson(text)
    const id = isRecord(json) ? str(json.id) : undefined
    if (isRecord(json) && id !== undefined && id !== '') return { accepted: true, id, video: json }
    return { accepted: false, failure: { action: 'retry', message: 'the upstream answered without a video id' } }
  }
  return { accepted: false, failure: classifyOpenAIFailure(status, text) }
}

/** OpenAI's video status in the task table's terms. */
export function videoTaskStatus (status: unknown): string {
  switch (status) {
    case 'queued': return 'QUEUED'
    case 'in_progress': return 'IN_PROGRESS'
    case 'completed': return 'SUCCESS'
    case 'failed': return 'FAILURE'
    default: return 'UNKNOWN'
  }
}

/**
 * A video object as a report: status, progress (`<n>%`), the error's message as the fail reason,
 * and the columns: `data` (the object, as JSON text for the jsonb column) and the finish time.
 */
function videoReport (video: Readonly<Record<string, unknown>>): TaskReport | undefined {
  const upstreamId = str(video.id)
  if (upstreamId === undefined || upstreamId === '') return undefined
  const status = videoTaskStatus(video.status)
  const fields: Record<string, unknown> = { data: JSON.stringify(video) }
  const completed = num(video.completed_at)
  if (completed !== undefined && completed > 0) fields.finish_time = Math.floor(completed)
  const report: TaskReport = { upstreamId, status, fields }
  const progress = num(video.progress)
  if (progress !== undefined) report.progress = `${Math.max(0, Math.min(100, Math.round(progress)))}%`
  else if (status === 'SUCCESS') report.progress = '100%'
  if (status === 'FAILURE') {
    const error = video.error
    const message = isRecord(error) ? str(error.message) : undefined
    report.failReason = message !== undefined && message !== '' ? message : 'the video generation failed'
  }
  return report
}

/**
 * How the billing worker polls video channels: one `GET /v1/videos/{id}` per task. Only a 200
 * video object whose id was asked about reports; errors (404 included: a proxy in front of the
 * upstream may answer it for a while) report nothing, so a lost job ends at the task timeout.
 */
export const videoPoll: TaskPollProtocol = {
  table: 'tasks',
  platform: VIDEO_PLATFORM,
  batch: 1,
  pollRequests: (channel, upstreamIds) => upstreamIds.map((id) => videoRetrieveRequest(channel, id)),
  readPoll: (status, body, upstreamIds) => {
    if (status !== 200) return []
    const json = parseJson(body.toString('utf8'))
    if (!isRecord(json)) return []
    const report = videoReport(json)
    return report !== undefined && upstreamIds.includes(report.upstreamId) ? [report] : []
  }
}
