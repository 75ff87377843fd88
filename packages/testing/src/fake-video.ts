import { createHash } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { formParts, jsonObject, randomId, type RecordedRequest, type ScriptedFailure, sendJson, serveFake } from './fake-http.js'
import type { Teardown } from './resources.js'

/** A video job as OpenAI's video API reports it. Tests may change any field. */
export interface FakeVideoJob {
  id: string
  object: 'video'
  model: string
  status: 'queued' | 'in_progress' | 'completed' | 'failed'
  progress: number
  created_at: number
  completed_at: number | null
  expires_at: number | null
  prompt: string | null
  seconds: string
  size: string
  remixed_from_video_id: string | null
  error: { code: string, message: string } | null
}

/** What a create request carried, read from its JSON or multipart body. */
export interface FakeVideoInput {
  contentType: string
  fields: Record<string, string>
  /** The `input_reference` file of a multipart create: its name, type and bytes. */
  inputReference?: { filename: string, contentType: string, data: Buffer }
}

/** The content variants of a completed video, with the content type each is served as. */
export const FAKE_VIDEO_VARIANTS = { video: 'video/mp4', thumbnail: 'image/webp', spritesheet: 'image/jpeg' } as const
export type FakeVideoVariant = keyof typeof FAKE_VIDEO_VARIANTS

/**
 * The bytes the fake serves for a completed video's `variant`: 256 KiB derived from the id and
 * variant (several chunks on the wire), so a test can compare what it downloaded.
 */
export function fakeVideoContent (id: string, variant: FakeVideoVariant = 'video'): Buffer {
  const seed = createHash('sha256').update(`${id}:${variant}`).digest()
  const out = Buffer.alloc(256 * 1024)
  for (let i = 0; i < out.length; i += seed.length) seed.copy(out, i)
  return out
}

/**
 * An upstream speaking OpenAI's video API on 127.0.0.1. Stable API, used by the gateway's and
 * the billing worker's tests:
 *
 * - Every request must carry `Authorization: Bearer <key>`; anything else gets OpenAI's 401
 *   `invalid_api_key` error (the request is still recorded).
 * - `POST /v1/videos` (JSON, or multipart/form-data with an optional `input_reference` file)
 *   creates a job (queued, progress 0; model default `sora-2`, seconds "4", size "720x1280")
 *   and answers the video object, unless `createFailures` holds a scripted refusal: the first is
 *   taken (removed) and answered (its status, its body or an OpenAI error envelope).
 * - `GET /v1/videos/<id>` answers the video object, or 404 `video_not_found`; `retrieveFailures`
 *   script refusals like `createFailures`.
 * - `GET /v1/videos/<id>/content[?variant=video|thumbnail|spritesheet]` streams
 *   {@link fakeVideoContent} once the job is completed; 404 otherwise.
 * - `POST /v1/videos/<id>/remix` (`prompt`) makes a queued job from a completed one (its model,
 *   seconds and size, `remixed_from_video_id` set); 400 for an unfinished source.
 * - `DELETE /v1/videos/<id>` removes a completed or failed job (`video.deleted`); 400 otherwise.
 * - Tests drive each job: {@link FakeVideo.start}, {@link FakeVideo.complete}, {@link FakeVideo.fail}.
 */
export interface FakeVideo {
  url: string
  /** The key it accepts. */
  key: string
  /** Every request, in arrival order. */
  requests: RecordedRequest[]
  /** Jobs by id, in creation order. */
  videos: Map<string, FakeVideoJob>
  /** What each job's create request carried, by job id. */
  inputs: Map<string, FakeVideoInput>
  /** Refusals for the next creates, taken first to last. */
  createFailures: ScriptedFailure[]
  /** Refusals for the next retrieves (GET /v1/videos/<id>), taken first to last. */
  retrieveFailures: ScriptedFailure[]
  /** in_progress with `progress` (default 50). */
  start: (id: string, progress?: number) => FakeVideoJob
  /** completed, progress 100, completed_at and expires_at (one hour later) set. */
  complete: (id: string) => FakeVideoJob
  /** failed with `error` (default code `moderation_blocked`). */
  fail: (id: string, message: string, code?: string) => FakeVideoJob
}

const openAIError = (message: string, type: string, code: string | null) => ({ error: { message, type, param: null, code } })

/** Starts a fake OpenAI video upstream accepting `key` (default `video-upstream-key`); closed at teardown. */
export async function fakeVideo (t: Teardown, opts: { key?: string } = {}): Promise<FakeVideo> {
  const now = () => Math.floor(Date.now() / 1000)
  const get = (id: string): FakeVideoJob => {
    const job = fake.videos.get(id)
    if (job === undefined) throw new Error(`fake video API has no video ${id}`)
    return job
  }
  const fake: FakeVideo = {
    url: '',
    key: opts.key ?? 'video-upstream-key',
    requests: [],
    videos: new Map(),
    inputs: new Map(),
    createFailures: [],
    retrieveFailures: [],
    start: (id, progress = 50) => Object.assign(get(id), { status: 'in_progress', progress }),
    complete: (id) => Object.assign(get(id), { status: 'completed', progress: 100, completed_at: now(), expires_at: now() + 3600 }),
    fail: (id, message, code = 'moderation_blocked') => Object.assign(get(id), { status: 'failed', error: { code, message }, completed_at: now() })
  }
  const refuse = (res: ServerResponse, failure: ScriptedFailure): void => {
    sendJson(res, failure.status, failure.body ?? openAIError(`fake video API refuses with HTTP ${failure.status}`, failure.status >= 500 ? 'server_error' : 'invalid_request_error', null))
  }
  const notFound = (res: ServerResponse, id: string): void => {
    sendJson(res, 404, openAIError(`Video with id '${id}' not found.`, 'invalid_request_error', 'video_not_found'))
  }
  const handle = (req: RecordedRequest, res: ServerResponse): void => {
    if (req.headers.authorization !== `Bearer ${fake.key}`) {
      sendJson(res, 401, openAIError('Incorrect API key provided', 'invalid_request_error', 'invalid_api_key'))
      return
    }
    if (req.method === 'POST' && req.path === '/v1/videos') {
      const failure = fake.createFailures.shift()
      if (failure !== undefined) return refuse(res, failure)
      const input = readInput(String(req.headers['content-type'] ?? ''), req.body)
      if (typeof input.fields['prompt'] !== 'string' || input.fields['prompt'] === '') {
        sendJson(res, 400, openAIError("Missing required parameter: 'prompt'.", 'invalid_request_error', 'missing_required_parameter'))
        return
      }
      const job: FakeVideoJob = {
        id: randomId('video_'),
        object: 'video',
        model: input.fields['model'] ?? 'sora-2',
        status: 'queued',
        progress: 0,
        created_at: now(),
        completed_at: null,
        expires_at: null,
        prompt: input.fields['prompt'],
        seconds: input.fields['seconds'] ?? '4',
        size: input.fields['size'] ?? '720x1280',
        remixed_from_video_id: null,
        error: null
      }
      fake.videos.set(job.id, job)
      fake.inputs.set(job.id, input)
      sendJson(res, 200, job)
      return
    }
    const remix = /^\/v1\/videos\/([^/]+)\/remix$/.exec(req.path)
    if (req.method === 'POST' && remix !== null) {
      const source = fake.videos.get(decodeURIComponent(remix[1] ?? ''))
      if (source === undefined) return notFound(res, decodeURIComponent(remix[1] ?? ''))
      const fields = readInput(String(req.headers['content-type'] ?? ''), req.body).fields
      if (typeof fields['prompt'] !== 'string' || fields['prompt'] === '') {
        sendJson(res, 400, openAIError("Missing required parameter: 'prompt'.", 'invalid_request_error', 'missing_required_parameter'))
        return
      }
      if (source.status !== 'completed') {
        sendJson(res, 400, openAIError('Only a completed video can be remixed.', 'invalid_request_error', 'invalid_video_status'))
        return
      }
      const job: FakeVideoJob = { ...source, id: randomId('video_'), status: 'queued', progress: 0, created_at: now(), completed_at: null, expires_at: null, prompt: fields['prompt'], remixed_from_video_id: source.id, error: null }
      fake.videos.set(job.id, job)
      fake.inputs.set(job.id, { contentType: String(req.headers['content-type'] ?? ''), fields })
      sendJson(res, 200, job)
      return
    }
    const m = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(req.path)
    if (req.method === 'DELETE' && m !== null && m[2] === undefined) {
      const id = decodeURIComponent(m[1] ?? '')
      const job = fake.videos.get(id)
      if (job === undefined) return notFound(res, id)
      if (job.status !== 'completed' && job.status !== 'failed') {
        sendJson(res, 400, openAIError('Only a completed or failed video can be deleted.', 'invalid_request_error', 'invalid_video_status'))
        return
      }
      fake.videos.delete(id)
      sendJson(res, 200, { id, object: 'video.deleted', deleted: true })
      return
    }
    if (req.method === 'GET' && m !== null) {
      const id = decodeURIComponent(m[1] ?? '')
      const job = fake.videos.get(id)
      if (m[2] === undefined) {
        const failure = fake.retrieveFailures.shift()
        if (failure !== undefined) return refuse(res, failure)
        if (job === undefined) return notFound(res, id)
        sendJson(res, 200, job)
        return
      }
      if (job === undefined || job.status !== 'completed') return notFound(res, id)
      const variant = req.query.get('variant') ?? 'video'
      if (!(variant in FAKE_VIDEO_VARIANTS)) {
        sendJson(res, 400, openAIError(`Invalid variant '${variant}'.`, 'invalid_request_error', 'invalid_value'))
        return
      }
      const v = variant as FakeVideoVariant
      const bytes = fakeVideoContent(id, v)
      res.writeHead(200, { 'content-type': FAKE_VIDEO_VARIANTS[v], 'content-length': String(bytes.length) })
      // Several writes, so the body crosses the wire in more than one chunk.
      for (let i = 0; i < bytes.length; i += 64 * 1024) res.write(bytes.subarray(i, i + 64 * 1024))
      res.end()
      return
    }
    sendJson(res, 404, openAIError(`Invalid URL (${req.method} ${req.path})`, 'invalid_request_error', 'unknown_url'))
  }
  fake.url = await serveFake(t, handle, (r) => fake.requests.push(r))
  return fake
}

/** The fields (and reference file) of a JSON or multipart create. */
function readInput (contentType: string, body: Buffer): FakeVideoInput {
  const fields: Record<string, string> = {}
  if (/^multipart\/form-data/i.test(contentType)) {
    let inputReference: FakeVideoInput['inputReference']
    for (const part of formParts(contentType, body)) {
      if (part.filename !== undefined) {
        if (part.name === 'input_reference') inputReference = { filename: part.filename, contentType: part.contentType ?? '', data: part.data }
      } else {
        fields[part.name] = part.data.toString('utf8')
      }
    }
    return { contentType, fields, ...(inputReference === undefined ? {} : { inputReference }) }
  }
  for (const [k, v] of Object.entries(jsonObject(body))) {
    if (typeof v === 'string' || typeof v === 'number') fields[k] = String(v)
  }
  return { contentType, fields }
}
