import { Readable } from 'node:stream'
import { findOwnTasks, type Task } from '@modelgate/db'
import {
  classifyOpenAIFailure,
  DEFAULT_VIDEO_MODEL,
  readVideoCreate,
  VIDEO_PLATFORM,
  VIDEO_VARIANTS,
  type VideoCreateBody,
  videoContentRequest,
  videoCreateRequest,
  videoSupported,
  videoTaskStatus
} from '@modelgate/providers'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { authenticate, type Caller } from '../relay/auth.js'
import { RelayError, relayMessage, RM, sendOpenAIError } from '../relay/errors.js'
import { channelConfig, pickKey } from '../relay/state.js'
import { ClientGone, multipartField, readText, send } from '../relay/upstream.js'
import type { TaskDeps } from './index.js'
import { pinnedTaskChannel } from './pinned.js'
import { submitTask } from './submit.js'

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
    return { model: field('model') || DEFAULT_VIDEO_MODEL, seconds: videoSeconds(input['seconds']), body: { raw: { contentType, data: req.body } }, input }
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

async function ownVideo (deps: TaskDeps, caller: Caller, id: string): Promise<Task | undefined> {
  const [row] = await findOwnTasks(deps.db, 'tasks', caller.record.user.id, [id], VIDEO_PLATFORM)
  return row
}

/**
 * OpenAI's video API (`POST /v1/videos`, `GET /v1/videos/{id}`, `GET /v1/videos/{id}/content`)
 * to OpenAI and custom channels, billed per second of video at the model's ModelPrice. Jobs are read from
 * Postgres (kept current by the billing worker) and their content streamed from the channel that
 * made them, for their owner only: another account's id answers like a missing one. Errors are
 * OpenAI's envelope.
 */
export async function videoRoutes (api: FastifyInstance, deps: TaskDeps): Promise<void> {
  await api.register(async (video) => {
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
        channel: pinnedTaskChannel(deps, caller, videoSupported),
        request: (channel) => videoCreateRequest(channel, create.body),
        read: (status, answer) => {
          const r = readVideoCreate(status, answer)
          if (!r.accepted) {
            const error = { message: r.failure.message, type: 'invalid_request_error', param: null, code: r.failure.code ?? null }
            return { accepted: false, answer: { status: status >= 400 && status < 500 ? status : 400, body: { error } }, failure: r.failure }
          }
          const status_ = videoTaskStatus(r.video['status'])
          const progress = typeof r.video['progress'] === 'number' ? `${Math.round(r.video['progress'])}%` : '0%'
          return {
            accepted: true,
            upstreamId: r.id,
            answer: { status: 200, body: r.video },
            row: {
              ...(status_ === 'UNKNOWN' ? {} : { status: status_ }),
              progress,
              properties: JSON.stringify({ model: create.model, ...create.input }),
              data: JSON.stringify(r.video)
            }
          }
        }
      })
      return await reply.code(outcome.answer.status).send(outcome.answer.body)
    })

    video.get<{ Params: { id: string } }>('/v1/videos/:id', async (req, reply) => {
      const caller = await authenticate(deps.callers, req)
      const row = await ownVideo(deps, caller, req.params.id)
      if (row === undefined) return notFound(reply, req.params.id)
      return videoObject(row)
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
      const channel = deps.state.channels.get(row.channel_id)
      const key = channel === undefined ? undefined : pickKey(channel, undefined)
      if (channel === undefined || key === undefined) {
        throw new RelayError(503, 'service_unavailable', 'channel_unavailable', 'The channel that made this video is no longer available')
      }
      const gone = new ClientGone()
      reply.raw.once('close', () => { if (!reply.raw.writableFinished) gone.abort() })
      const up = videoContentRequest(channelConfig(channel, key), id, variant)
      let res
      try {
        res = await send(up, gone, deps.upstreamTimeoutMs, deps.outbound.dispatcher(channel.proxyUrl))
      } catch (err) {
        req.log.warn({ err, channel: channel.id }, 'video content upstream unreachable')
        throw new RelayError(502, 'upstream_error', 'upstream_unreachable', 'The upstream is unreachable or timed out')
      }
      if (res.status !== 200) {
        const failure = classifyOpenAIFailure(res.status, await readText(res))
        const status = res.status >= 400 && res.status < 500 ? res.status : 502
        return sendOpenAIError(reply, status, { message: failure.message, type: status === 502 ? 'upstream_error' : 'invalid_request_error', code: failure.code ?? null })
      }
      return await reply.code(200).header('content-type', res.contentType || 'application/octet-stream').send(bodyStream(res))
    })
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
