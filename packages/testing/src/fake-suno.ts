import type { ServerResponse } from 'node:http'
import { jsonObject, randomId, type RecordedRequest, type ScriptedFailure, sendJson, serveFake } from './fake-http.js'
import type { Teardown } from './resources.js'

/** The task statuses of Suno-API (and of new-api's relay of it). */
export type FakeSunoStatus = 'NOT_START' | 'SUBMITTED' | 'QUEUED' | 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE'

/** One task held by the fake, in the shape `/suno/fetch` reports it. Tests may change any field. */
export interface FakeSunoTask {
  task_id: string
  action: 'MUSIC' | 'LYRICS'
  status: FakeSunoStatus
  fail_reason: string
  submit_time: number
  start_time: number
  finish_time: number
  progress: string
  /** Music: the clips (audio_url, image_url, video_url, title, ...); lyrics: `{id, text, title, status}`; null before any result. */
  data: unknown
  /** The submit's JSON body as it arrived. */
  request: Record<string, unknown>
}

/**
 * A Suno-API upstream on 127.0.0.1 (as a CHANNEL_TYPE.suno channel calls it). Stable API, used by
 * the gateway's and the billing worker's tests:
 *
 * - Every request must carry `Authorization: Bearer <key>`; anything else gets HTTP 401
 *   `{code:"unauthorized", message}` (the request is still recorded).
 * - `POST /suno/submit/music` and `POST /suno/submit/lyrics` create a task in SUBMITTED and
 *   answer `{code:"success", message:"", data:"<task id>"}`, unless `submitFailures` holds a
 *   scripted refusal: the first one is taken (removed) and answered instead (its status, its
 *   body or `{code:"error", message, data:null}`).
 * - `POST /suno/fetch {ids, action}` answers `{code:"success", message:"", data:[tasks]}` with the
 *   known tasks among `ids` (all tasks when `ids` is empty), filtered by `action` when given;
 *   `GET /suno/fetch/<id>` answers `{code:"success", message:"", data: task}` or HTTP 404
 *   `{code:"error", message:"task not found", data:null}`. `fetchFailures` script refusals of
 *   both like `submitFailures`.
 * - Tests drive each task: {@link FakeSuno.queue}, {@link FakeSuno.start},
 *   {@link FakeSuno.succeed}, {@link FakeSuno.fail}.
 */
export interface FakeSuno {
  url: string
  /** The key it accepts. */
  key: string
  /** Every request, in arrival order. */
  requests: RecordedRequest[]
  /** Tasks by id, in creation order. */
  tasks: Map<string, FakeSunoTask>
  /** Refusals for the next submits, taken first to last. */
  submitFailures: ScriptedFailure[]
  /** Refusals for the next fetches, taken first to last. */
  fetchFailures: ScriptedFailure[]
  /** The submit requests that created a task (not the refused ones), in order. */
  submits: RecordedRequest[]
  /** QUEUED. */
  queue: (id: string) => FakeSunoTask
  /** IN_PROGRESS with `progress` (default "50%"), start_time set. */
  start: (id: string, progress?: string) => FakeSunoTask
  /**
   * SUCCESS, 100%, finish_time set, and `data`: by default two clips for music (audio_url
   * `https://cdn.suno.test/<id>-<n>.mp3`, image_url `.jpeg`, video_url `.mp4`, title, status
   * "complete") or `{id, text, title, status:"complete"}` for lyrics.
   */
  succeed: (id: string, data?: unknown) => FakeSunoTask
  /** FAILURE with `reason`, finish_time set. */
  fail: (id: string, reason: string) => FakeSunoTask
}

/** The two clips a music task ends with by default. */
export function defaultSunoClips (id: string, title = 'Fake song'): Array<Record<string, unknown>> {
  return [1, 2].map((n) => ({
    id: `${id}-${n}`,
    title,
    status: 'complete',
    audio_url: `https://cdn.suno.test/${id}-${n}.mp3`,
    image_url: `https://cdn.suno.test/${id}-${n}.jpeg`,
    image_large_url: `https://cdn.suno.test/${id}-${n}-large.jpeg`,
    video_url: `https://cdn.suno.test/${id}-${n}.mp4`,
    model_name: 'chirp-v3',
    metadata: { tags: 'pop', duration: 120 + n, type: 'gen' }
  }))
}

/** Starts a fake Suno-API upstream accepting `key` (default `suno-upstream-key`); closed at teardown. */
export async function fakeSuno (t: Teardown, opts: { key?: string } = {}): Promise<FakeSuno> {
  const now = () => Math.floor(Date.now() / 1000)
  const get = (id: string): FakeSunoTask => {
    const task = fake.tasks.get(id)
    if (task === undefined) throw new Error(`fake Suno has no task ${id}`)
    return task
  }
  const fake: FakeSuno = {
    url: '',
    key: opts.key ?? 'suno-upstream-key',
    requests: [],
    tasks: new Map(),
    submitFailures: [],
    fetchFailures: [],
    submits: [],
    queue: (id) => Object.assign(get(id), { status: 'QUEUED' }),
    start: (id, progress = '50%') => Object.assign(get(id), { status: 'IN_PROGRESS', progress, start_time: now() }),
    succeed: (id, data) => {
      const task = get(id)
      const title = typeof task.request['title'] === 'string' ? task.request['title'] : 'Fake song'
      const result = data ?? (task.action === 'MUSIC' ? defaultSunoClips(id, title) : { id, text: `[Verse]\nlyrics for ${String(task.request['prompt'] ?? '')}`, title, status: 'complete' })
      return Object.assign(task, { status: 'SUCCESS', progress: '100%', start_time: task.start_time || now(), finish_time: now(), data: result })
    },
    fail: (id, reason) => Object.assign(get(id), { status: 'FAILURE', fail_reason: reason, finish_time: now() })
  }

  const refuse = (res: ServerResponse, failure: ScriptedFailure): void => {
    sendJson(res, failure.status, failure.body ?? { code: 'error', message: `fake Suno refuses with HTTP ${failure.status}`, data: null })
  }
  const handle = (req: RecordedRequest, res: ServerResponse): void => {
    if (req.headers.authorization !== `Bearer ${fake.key}`) {
      sendJson(res, 401, { code: 'unauthorized', message: 'invalid api key', data: null })
      return
    }
    const submit = /^\/suno\/submit\/(music|lyrics)$/.exec(req.path)
    if (req.method === 'POST' && submit !== null) {
      const failure = fake.submitFailures.shift()
      if (failure !== undefined) return refuse(res, failure)
      const body = jsonObject(req.body)
      const id = randomId('')
      fake.submits.push(req)
      fake.tasks.set(id, {
        task_id: id,
        action: submit[1] === 'music' ? 'MUSIC' : 'LYRICS',
        status: 'SUBMITTED',
        fail_reason: '',
        submit_time: now(),
        start_time: 0,
        finish_time: 0,
        progress: '0%',
        data: null,
        request: body
      })
      sendJson(res, 200, { code: 'success', message: '', data: id })
      return
    }
    if (req.method === 'POST' && req.path === '/suno/fetch') {
      const failure = fake.fetchFailures.shift()
      if (failure !== undefined) return refuse(res, failure)
      const body = jsonObject(req.body)
      const ids = Array.isArray(body['ids']) ? body['ids'].filter((id): id is string => typeof id === 'string') : []
      const action = typeof body['action'] === 'string' ? body['action'].toUpperCase() : ''
      const tasks = [...fake.tasks.values()].filter((task) => (ids.length === 0 || ids.includes(task.task_id)) && (action === '' || task.action === action))
      sendJson(res, 200, { code: 'success', message: '', data: tasks.map(wire) })
      return
    }
    const one = /^\/suno\/fetch\/([^/]+)$/.exec(req.path)
    if (req.method === 'GET' && one !== null) {
      const failure = fake.fetchFailures.shift()
      if (failure !== undefined) return refuse(res, failure)
      const task = fake.tasks.get(decodeURIComponent(one[1] ?? ''))
      if (task === undefined) sendJson(res, 404, { code: 'error', message: 'task not found', data: null })
      else sendJson(res, 200, { code: 'success', message: '', data: wire(task) })
      return
    }
    sendJson(res, 404, { code: 'error', message: `no route ${req.method} ${req.path}`, data: null })
  }
  fake.url = await serveFake(t, handle, (r) => fake.requests.push(r))
  return fake
}

/** A task as the upstream reports it (without the fake's own `request`). */
function wire (task: FakeSunoTask): Record<string, unknown> {
  const { request: _request, ...rest } = task
  return rest
}
