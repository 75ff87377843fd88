import { Readable } from 'node:stream'
import { findOwnTasks, listOwnTasks, markOwnTaskDeleted, type Task } from '@modelgate/db'
import {
  type ChannelConfig,
  classifyAnswer,
  classifyOpenAIFailure,
  DEFAULT_VIDEO_MODEL,
  readVideoCreate,
  VIDEO_PLATFORM,
  VIDEO_VARIANTS,
  type VideoCreateBody,
  videoContentRequest,
  videoCreateRequest,
  videoDeleteRequest,
  videoRemixRequest,
  videoSupported,
  videoTaskStatus,
  type UpstreamRequest
} from '@modelgate/providers'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { pinnedChannel } from '../../relay/admission.js'
import { authenticate, type Caller } from '../../relay/auth.js'
import type { RouteDeps } from '../../relay/deps.js'
import { RelayError, relayMessage, RM, sendOpenAIError } from '../../relay/errors.js'
import { channelConfig, pickKey, type RelayChannel } from '../../relay/state.js'
import { ClientGone, multipartField, readText, send } from '../../relay/upstream.js'
import { submitTask, type TaskSubmission } from '../../tasks/submit.js'

/** The row's status as OpenAI's video status (a task not yet reported on is queued). */
const VIDEO_STATUS: Readonly<Record<string, string>> = { IN_PROGRESS: 'in_progress', SUCCESS: 'completed', FAILURE: 'failed' }

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v)

/** What a create asks for: the model (routing and price), the body to forward, and what is kept on the row. */
interface VideoCreate {
  model: string
  /** The video's length in seconds: what it is billed by (ModelPrice is per second). */
  seconds: number
  body: VideoCreateBody
  input: Record<string, string>
}

/** OpenAI's default video length, when a create names none. */
const DEFAULT_VIDEO_SECONDS = 4
/** The longest video a create may ask for. */
const MAX_VIDEO_SECONDS = 120

/** The length a create asks for, in whole seconds (billed by it); refuses anything else. */
function videoSeconds (text: string | undefined): number {
  if (text === undefined || text === '') return DEFAULT_VIDEO_SECONDS
  const n = Number(text)
  if (!Number.isInteger(n) || n < 1 || n > MAX_VIDEO_SECONDS) {
    throw new RelayError(400, 'invalid_request_error', 'invalid_seconds', `seconds must be a whole number from 1 to ${MAX_VIDEO_SECONDS}`)
  }
  return n
}

/**
 * Reads a create: JSON (the model set to the one billed, OpenAI's default `sora-2` when absent),
 * or multipart/form-data (the official SDK always sends it; `input_reference` may be a file)
 * forwarded byte for byte, whose model, when absent, is the upstream's same default.
 */
function readCreate (req: FastifyRequest): VideoCreate {
  const contentType = String(req.headers['content-type'] ?? '')
  if (Buffer.isBuffer(req.body) && /^multipart\/form-data/i.test(contentType)) {
    const field = (name: string) => multipartField(contentType, req.body as Buffer, name)
    const input: Record<string, string> = {}
    for (const name of ['prompt', 'seconds', 'size']) {
      const value = field(name)
      if (value !== undefined) input[name] = value
    }
    const model = field('model')
    return { model: model || DEFAULT_VIDEO_MODEL, seconds: videoSeconds(input['seconds']), body: { raw: { contentType, data: req.body, model } }, input }
  }
  if (!isObject(req.body)) throw new RelayError(400, 'invalid_request_error', 'invalid_body', RM.bodyNotObject)
  const body = req.body
  const model = typeof body['model'] === 'string' && body['model'] !== '' ? body['model'] : DEFAULT_VIDEO_MODEL
  const input: Record<string, string> = {}
  for (const name of ['prompt', 'seconds', 'size']) {
    const value = body[name]
    if (typeof value === 'string' || typeof value === 'number') input[name] = String(value)
  }
  return { model, seconds: videoSeconds(input['seconds']), body: { json: { ...body, model } }, input }
}

/**
 * A task row as OpenAI's video object: the upstream's last report (kept in `data`) with the
 * row's own word on status, progress, times and failure, the id being the upstream's.
 */
function videoObject (row: Task): Json {
  const last = isObject(row.data) ? row.data : {}
  const asked = isObject(row.properties) ? row.properties : {}
  const status = VIDEO_STATUS[row.status] ?? 'queued'
  const progress = Number.parseInt(row.progress, 10)
  const finished = status === 'completed' || status === 'failed'
  const lastError = isObject(last['error']) ? last['error'] : {}
  return {
    ...last,
    id: row.task_id,
    object: 'video',
    model: row.model_name,
    status,
    progress: Number.isFinite(progress) ? progress : status === 'completed' ? 100 : 0,
    created_at: typeof last['created_at'] === 'number' ? last['created_at'] : row.submit_time,
    completed_at: finished && row.finish_time > 0 ? row.finish_time : null,
    expires_at: typeof last['expires_at'] === 'number' ? last['expires_at'] : null,
    prompt: last['prompt'] ?? asked['prompt'] ?? null,
    seconds: last['seconds'] ?? asked['seconds'] ?? null,
    size: last['size'] ?? asked['size'] ?? null,
    remixed_from_video_id: last['remixed_from_video_id'] ?? null,
    error: status === 'failed' ? { code: typeof lastError['code'] === 'string' ? lastError['code'] : 'video_generation_failed', message: row.fail_reason } : null
  }
}

/** OpenAI's answer to a video id it does not know (also another account's id). */
function notFound (reply: FastifyReply, id: string): FastifyReply {
  return sendOpenAIError(reply, 404, { message: `Video with id '${id}' not found.`, type: 'invalid_request_error', code: 'video_not_found' })
}

async function ownVideo (deps: RouteDeps, caller: Caller, id: string): Promise<Task | undefined> {
  const [row] = await findOwnTasks(deps.db, 'tasks', caller.record.user.id, [id], VIDEO_PLATFORM)
  return row
}

/** The most videos one list page holds, and the page size when the client names none. */
const MAX_LIST_LIMIT = 100
const DEFAULT_LIST_LIMIT = 20

/** `limit` and `order` of a list request, refused when they are not what OpenAI accepts. */
function listParams (query: { limit?: string, order?: string }): { limit: number, order: 'asc' | 'desc' } {
  const limit = query.limit === undefined || query.limit === '' ? DEFAULT_LIST_LIMIT : Number(query.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new RelayError(400, 'invalid_request_error', 'invalid_value', `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`)
  }
  const order = query.order ?? 'desc'
  if (order !== 'asc' && order !== 'desc') throw new RelayError(400, 'invalid_request_error', 'invalid_value', "order must be 'asc' or 'desc'")
  return { limit, order }
}

/**
 * Reads a create or remix answer: an accepted job is charged and recorded (its status, progress,
 * what was asked, the upstream's object); a refusal answers in OpenAI's envelope with the
 * upstream's 4xx status (400 for anything else) and is classified for failover.
 */
function readVideoAnswer (properties: Record<string, unknown>): TaskSubmission['read'] {
  return (status, answer) => {
    const r = readVideoCreate(status, answer)
    if (!r.accepted) {
      const error = { message: r.failure.message, type: 'invalid_request_error', param: null, code: r.failure.code ?? null }
      return { accepted: false, answer: { status: status >= 400 && status < 500 ? status : 400, body: { error } }, failure: r.failure }
    }
    const taskStatus = videoTaskStatus(r.video['status'])
    const progress = typeof r.video['progress'] === 'number' ? `${Math.round(r.video['progress'])}%` : '0%'
    return {
      accepted: true,
      upstreamId: r.id,
      answer: { status: 200, body: r.video },
      row: {
        ...(taskStatus === 'UNKNOWN' ? {} : { status: taskStatus }),
        progress,
        properties: JSON.stringify(properties),
        data: JSON.stringify(r.video)
      }
    }
  }
}

/** The channel that made a video, with a key: where its content, deletion and remixes go. */
function channelOfVideo (deps: RouteDeps, row: Task): { channel: RelayChannel, config: ChannelConfig } {
  const channel = deps.state.channels.get(row.channel_id)
  const key = channel === undefined ? undefined : pickKey(channel, undefined)
  if (channel === undefined || key === undefined) {
    throw new RelayError(503, 'service_unavailable', 'channel_unavailable', 'The channel that made this video is no longer available')
  }
  return { channel, config: channelConfig(channel, key) }
}

/**
 * Calls the channel that made a video (content, deletion) and returns its answer when it is
 * 2xx or one of `passed`; an unreachable channel is a 502, a refusal about the request is
 * answered in OpenAI's envelope (its 4xx status, the upstream's message cleaned) and `undefined`
 * returned, and any other refusal (the channel's own failure) is a 502 with a generic message.
 */
async function callVideoChannel (deps: RouteDeps, req: FastifyRequest, reply: FastifyReply, row: Task, build: (c: ChannelConfig) => UpstreamRequest, passed: readonly number[] = []) {
  const { channel, config } = channelOfVideo(deps, row)
  const gone = new ClientGone()
  reply.raw.once('close', () => { if (!reply.raw.writableFinished) gone.abort() })
  let res
  try {
    res = await send(build(config), gone, { idleMs: deps.upstreamTimeoutMs }, deps.outbound.dispatcher(channel.proxyUrl))
  } catch (err) {
    req.log.warn({ err, channel: channel.id }, 'video upstream unreachable')
    throw new RelayError(502, 'upstream_error', 'upstream_unreachable', 'The upstream is unreachable or timed out')
  }
  if ((res.status >= 200 && res.status < 300) || passed.includes(res.status)) return res
  const failure = classifyAnswer({ classifyFailure: classifyOpenAIFailure }, res.status, res.contentType, await readText(res))
  // The upstream's words only about the client's request; the channel's own failure is for admins.
  if (failure.action !== 'client') {
    req.log.warn({ channel: channel.id, status: res.status, code: failure.code, reason: failure.message }, 'video upstream refused')
    throw new RelayError(502, 'upstream_error', 'upstream_error', RM.upstreamFailed)
  }
  await sendOpenAIError(reply, res.status, { message: failure.message, type: 'invalid_request_error', code: failure.code ?? null })
  return undefined
}

/**
 * OpenAI's video API to OpenAI and custom channels: create (`POST /v1/videos`, billed per second
 * of video at the model's ModelPrice, the channel's model mapping applied), remix (`POST
 * /v1/videos/{id}/remix`, billed like its source, on the source's channel), list, retrieve,
 * delete (finished videos only) and content. Jobs are read from Postgres (kept current by the
 * billing worker) and their content streamed from the channel that made them, for their owner
 * only: another account's id, like a deleted one, answers like a missing one. Errors are
 * OpenAI's envelope.
 */
export default async function videoRoutes (video: FastifyInstance) {
  const deps = video.relayDeps
  video.setErrorHandler(async (err: FastifyError, req, reply) => {
    if (err instanceof RelayError) {
      if (err.headers !== undefined) void reply.headers(err.headers)
      return sendOpenAIError(reply, err.status, { message: relayMessage(req, err), type: err.type, code: err.code })
    }
    const status = err.statusCode ?? 500
    if (status >= 500) req.log.error({ err }, 'video route error')
    return sendOpenAIError(reply, status >= 500 ? 500 : status, {
      message: status >= 500 ? 'internal error' : err.message,
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      code: err.code ?? null
    })
  })

  video.post('/v1/videos', async (req, reply) => {
    const caller = await authenticate(deps.callers, req)
    const create = readCreate(req)
    const outcome = await submitTask(deps, req, caller, {
      table: 'tasks',
      model: create.model,
      units: create.seconds,
      action: 'generate',
      platform: VIDEO_PLATFORM,
      accepts: videoSupported,
      channel: pinnedChannel(deps.state, caller, videoSupported),
      request: async (channel, upstreamModel) => {
        try {
          return await videoCreateRequest(channel, create.body, upstreamModel)
        } catch (err) {
          // Only a multipart body that must be encoded again (a mapped model) is parsed in full.
          req.log.debug({ err }, 'video create body unreadable')
          throw new RelayError(400, 'invalid_request_error', 'invalid_body', 'The multipart/form-data body could not be read')
        }
      },
      read: readVideoAnswer({ model: create.model, ...create.input })
    })
    return await reply.code(outcome.answer.status).send(outcome.answer.body)
  })

  video.get<{ Querystring: { after?: string, limit?: string, order?: string } }>('/v1/videos', async (req) => {
    const caller = await authenticate(deps.callers, req)
    const { limit, order } = listParams(req.query)
    const after = req.query.after === undefined || req.query.after === '' ? undefined : req.query.after
    const page = await listOwnTasks(deps.db, caller.record.user.id, VIDEO_PLATFORM, { limit, order, ...(after === undefined ? {} : { after }) })
    const data = page.rows.map(videoObject)
    return { object: 'list', data, first_id: data[0]?.['id'] ?? null, last_id: data.at(-1)?.['id'] ?? null, has_more: page.hasMore }
  })

  video.get<{ Params: { id: string } }>('/v1/videos/:id', async (req, reply) => {
    const caller = await authenticate(deps.callers, req)
    const row = await ownVideo(deps, caller, req.params.id)
    if (row === undefined) return notFound(reply, req.params.id)
    return videoObject(row)
  })

  video.post<{ Params: { id: string } }>('/v1/videos/:id/remix', async (req, reply) => {
    const caller = await authenticate(deps.callers, req)
    if (!isObject(req.body)) throw new RelayError(400, 'invalid_request_error', 'invalid_body', RM.bodyNotObject)
    const body = req.body
    if (typeof body['prompt'] !== 'string' || body['prompt'] === '') {
      throw new RelayError(400, 'invalid_request_error', 'missing_required_parameter', "Missing required parameter: 'prompt'.")
    }
    const source = await ownVideo(deps, caller, req.params.id)
    if (source === undefined) return notFound(reply, req.params.id)
    // A remix keeps its source's model and length: billed as the source was.
    const asked = isObject(source.properties) ? source.properties : {}
    const seconds = videoSeconds(typeof asked['seconds'] === 'string' ? asked['seconds'] : undefined)
    const { channel } = channelOfVideo(deps, source)
    const outcome = await submitTask(deps, req, caller, {
      table: 'tasks',
      model: source.model_name,
      units: seconds,
      action: 'remix',
      platform: VIDEO_PLATFORM,
      accepts: videoSupported,
      channel,
      request: (config) => videoRemixRequest(config, source.task_id, body),
      read: readVideoAnswer({ ...asked, prompt: body['prompt'], remixed_from_video_id: source.task_id })
    })
    return await reply.code(outcome.answer.status).send(outcome.answer.body)
  })

  video.delete<{ Params: { id: string } }>('/v1/videos/:id', async (req, reply) => {
    const caller = await authenticate(deps.callers, req)
    const { id } = req.params
    const row = await ownVideo(deps, caller, id)
    if (row === undefined) return notFound(reply, id)
    if (row.status !== 'SUCCESS' && row.status !== 'FAILURE') {
      return sendOpenAIError(reply, 400, { message: 'Only a completed or failed video can be deleted.', type: 'invalid_request_error', code: 'invalid_video_status' })
    }
    // The upstream's 404: its assets are gone already (expired); the deletion stands.
    const res = await callVideoChannel(deps, req, reply, row, (c) => videoDeleteRequest(c, id), [404])
    if (res === undefined) return reply
    await readText(res)
    await markOwnTaskDeleted(deps.db, caller.record.user.id, row.id, Math.floor(Date.now() / 1000))
    return { id, object: 'video.deleted', deleted: true }
  })

  video.get<{ Params: { id: string }, Querystring: { variant?: string } }>('/v1/videos/:id/content', async (req, reply) => {
    const caller = await authenticate(deps.callers, req)
    const { id } = req.params
    const variant = req.query.variant
    if (variant !== undefined && !VIDEO_VARIANTS.has(variant)) {
      return sendOpenAIError(reply, 400, { message: `Invalid variant '${variant}': expected video, thumbnail or spritesheet.`, type: 'invalid_request_error', code: 'invalid_value', param: 'variant' })
    }
    const row = await ownVideo(deps, caller, id)
    if (row === undefined) return notFound(reply, id)
    const res = await callVideoChannel(deps, req, reply, row, (c) => videoContentRequest(c, id, variant))
    if (res === undefined) return reply
    return await reply.code(200).header('content-type', res.contentType || 'application/octet-stream').send(bodyStream(res))
  })
}

/**
 * The upstream's body as a stream for the reply, at the client's pace: the upstream's flow stops
 * while the stream's buffer is full and resumes when the client reads; a stream the reply drops
 * (the client left) stops the call.
 */
function bodyStream (res: Awaited<ReturnType<typeof send>>): Readable {
  let ended = false
  const stream = new Readable({ read () { res.resume() } })
  stream.once('close', () => { if (!ended) res.abort(new Error('the client has gone')) })
  res.read((chunk) => stream.push(chunk)).then(() => {
    ended = true
    stream.push(null)
  }, (err: Error) => {
    ended = true
    stream.destroy(err)
  })
  return stream
}
