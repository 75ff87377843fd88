import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { listen } from './proxies.js'
import type { Teardown } from './resources.js'

/**
 * A fake Midjourney-Proxy (novicezk/midjourney-proxy's HTTP API) on 127.0.0.1 for tests.
 *
 * Speaks:
 * - `POST /mj/submit/{imagine,change,simple-change,describe,blend,action,modal,shorten,video,edits}`
 *   -> `{code: 1, description: 'Submit success', result: '<task id>', properties: {}}`; the task is
 *   created SUBMITTED (progress '0%'). `action` and `change` need the referenced `taskId` to exist
 *   here (else code 3, like the real proxy); an `action` whose customId opens a modal
 *   (`MJ::CustomZoom::`, `MJ::Inpaint::`) answers code 21 with a task in status MODAL, which
 *   `modal` {taskId, prompt} then submits (code 1, same id).
 * - `POST /mj/submit/upload-discord-images` -> `{code: 1, result: ['<image url>', ...]}` (no task).
 * - `GET /mj/task/{id}/fetch` -> the task DTO (404 when unknown);
 *   `POST /mj/task/list-by-condition` {ids} -> the known tasks among ids, as an array of DTOs;
 *   `GET /mj/task/{id}/image-seed` -> `{code: 1, result: '<seed>'}` once the task succeeded.
 * - Everything again under `/mj-fast/mj/...`, `/mj-relax/mj/...`, `/mj-turbo/mj/...`
 *   (Midjourney-Proxy Plus's mode paths); the request's `mode` is recorded.
 * - `GET /images/{id}.png`: the task's image (a small PNG, `content-type: image/png`, no auth),
 *   the URL that SUCCESS tasks carry as imageUrl.
 *
 * Every `/mj...` request must carry `mj-api-secret: <key>`; a missing or wrong one answers 401
 * (and is recorded with `authorized: false`).
 *
 * Test API (stable; the billing worker's poller tests use it too):
 * - `requests`: every request received, in order ({method, path, route, mode, headers, body, authorized}).
 * - `submits(route?)`: the authorized submit requests (optionally of one route, e.g. 'imagine').
 * - `script(...outcomes)`: the next submits answer these instead (one each, in order):
 *   `{code: 4|23|24|..., description?}` a refusal with that code (HTTP 200, no task);
 *   `{code: 21|22}` accepted with that code (task created); `{http: 500}` that HTTP status;
 *   `{delayMs}` answers after a delay (combine with the others; alone: a normal success).
 * - `scriptPoll(...outcomes)`: the same for the next list-by-condition / fetch requests
 *   (`{http: 500}`, `{delayMs}`).
 * - `task(id)`: the task's current DTO (undefined when unknown); `tasks`: all of them.
 * - `progress(id, percent)`: IN_PROGRESS with that progress ('40%') and a startTime.
 * - `succeed(id, opts?)`: SUCCESS, progress '100%', imageUrl `${url}/images/<id>.png`, U1..U4/V1..V4/🔄
 *   buttons, finishTime.
 * - `fail(id, reason)`: FAILURE with failReason, finishTime.
 * - `update(id, patch)`: any other change to the DTO.
 * - `imageBytes`: the PNG served as every task's image.
 */
export interface FakeMidjourney {
  /** Base URL (the channel's base_url). */
  url: string
  /** The mj-api-secret it accepts. */
  key: string
  requests: FakeMjRequest[]
  tasks: Map<string, FakeMjTask>
  submits: (route?: string) => FakeMjRequest[]
  script: (...outcomes: FakeMjOutcome[]) => void
  scriptPoll: (...outcomes: FakeMjOutcome[]) => void
  task: (id: string) => FakeMjTask | undefined
  progress: (id: string, percent: string) => void
  succeed: (id: string, opts?: { imageUrl?: string, buttons?: FakeMjButton[] }) => void
  fail: (id: string, reason: string) => void
  update: (id: string, patch: Partial<FakeMjTask>) => void
  imageBytes: Buffer
}

/** One request received by the fake. */
export interface FakeMjRequest {
  method: string
  /** The full path with query. */
  path: string
  /** The path after `/mj` (and after the mode prefix): `/submit/imagine`, `/task/123/fetch`, ... */
  route: string
  /** 'fast' | 'relax' | 'turbo' when the path had a `/mj-<mode>` prefix. */
  mode?: string
  headers: IncomingMessage['headers']
  /** The parsed JSON body (undefined when none or not JSON). */
  body: unknown
  authorized: boolean
}

/** A scripted answer: a refusal code, an HTTP status, a delay. */
export interface FakeMjOutcome {
  code?: number
  description?: string
  http?: number
  delayMs?: number
}

export interface FakeMjButton {
  customId: string
  emoji: string
  label: string
  type: number
  style: number
}

/** A task as Midjourney-Proxy's TaskDTO shows it. */
export interface FakeMjTask {
  id: string
  action: string
  prompt: string
  promptEn: string
  description: string
  state: string
  submitTime: number
  startTime: number
  finishTime: number
  imageUrl: string
  status: string
  progress: string
  failReason: string
  buttons: FakeMjButton[]
  properties: Record<string, unknown>
}

/** The actions of the submit routes, as Midjourney-Proxy names them. */
const ROUTE_ACTIONS: Record<string, string> = {
  imagine: 'IMAGINE',
  describe: 'DESCRIBE',
  blend: 'BLEND',
  shorten: 'SHORTEN',
  video: 'VIDEO',
  edits: 'EDITS'
}

/** A 1x1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')

let sequence = 0

function newId (): string {
  sequence = (sequence + 1) % 10000
  return `${Date.now()}${String(sequence).padStart(4, '0')}`
}

function defaultButtons (id: string): FakeMjButton[] {
  const buttons: FakeMjButton[] = []
  for (let i = 1; i <= 4; i++) buttons.push({ customId: `MJ::JOB::upsample::${i}::${id}`, emoji: '', label: `U${i}`, type: 2, style: 2 })
  buttons.push({ customId: `MJ::JOB::reroll::0::${id}::SOLO`, emoji: '🔄', label: '', type: 2, style: 2 })
  for (let i = 1; i <= 4; i++) buttons.push({ customId: `MJ::JOB::variation::${i}::${id}`, emoji: '', label: `V${i}`, type: 2, style: 2 })
  return buttons
}

/** The action a button's customId asks for (enough of Midjourney-Proxy's rules for a fake). */
function actionOfCustomId (customId: string): string {
  if (customId.includes('::upsample::')) return 'UPSCALE'
  if (customId.includes('::reroll::')) return 'REROLL'
  if (customId.includes('::high_variation::')) return 'HIGH_VARIATION'
  if (customId.includes('::low_variation::')) return 'LOW_VARIATION'
  if (customId.includes('::variation::')) return 'VARIATION'
  if (customId.includes('::pan_')) return 'PAN'
  if (customId.startsWith('MJ::CustomZoom::')) return 'CUSTOM_ZOOM'
  if (customId.startsWith('MJ::Inpaint::')) return 'INPAINT'
  if (customId.startsWith('MJ::Outpaint::')) return 'ZOOM'
  return 'ACTION'
}

function record (v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {}
}

function text (v: unknown): string {
  return typeof v === 'string' ? v : ''
}

async function readBody (req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  if (chunks.length === 0) return undefined
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    return undefined
  }
}

function json (res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

/** Starts a fake Midjourney-Proxy accepting `key` (default 'mj-secret'); closed at teardown. */
export async function fakeMidjourney (t: Teardown, opts: { key?: string } = {}): Promise<FakeMidjourney> {
  const key = opts.key ?? 'mj-secret'
  const requests: FakeMjRequest[] = []
  const tasks = new Map<string, FakeMjTask>()
  const submitScript: FakeMjOutcome[] = []
  const pollScript: FakeMjOutcome[] = []
  let base = ''

  const create = (action: string, fields: Partial<FakeMjTask> = {}): FakeMjTask => {
    const id = newId()
    const task: FakeMjTask = {
      id, action, prompt: '', promptEn: '', description: '', state: '', submitTime: Date.now(), startTime: 0, finishTime: 0,
      imageUrl: '', status: 'SUBMITTED', progress: '0%', failReason: '', buttons: [], properties: {}, ...fields
    }
    tasks.set(id, task)
    return task
  }
  const mustTask = (id: string): FakeMjTask => {
    const task = tasks.get(id)
    if (task === undefined) throw new Error(`fake midjourney: no task ${id}`)
    return task
  }

  /** A submit: refusals and HTTP failures from the script, else the route's own answer. */
  const submit = (res: ServerResponse, route: string, body: Record<string, unknown>): void => {
    const scripted = submitScript.shift()
    if (scripted?.http !== undefined) { json(res, scripted.http, { error: 'scripted failure' }); return }
    const code = scripted?.code
    if (code !== undefined && code !== 1 && code !== 21 && code !== 22) {
      json(res, 200, { code, description: scripted?.description ?? 'scripted refusal', result: null, properties: {} })
      return
    }
    const common = { state: text(body.state) }
    const accepted = (task: FakeMjTask, c = code ?? 1): void => {
      const description = c === 22 ? 'In queue, there are 1 tasks ahead' : c === 21 ? 'Waiting for window confirm' : 'Submit success'
      json(res, 200, { code: c, description: scripted?.description ?? description, result: task.id, properties: { discordInstanceId: 'fake', ...(c === 21 ? { finalPrompt: task.prompt } : {}) } })
    }
    switch (route) {
      case 'upload-discord-images': {
        const list = Array.isArray(body.base64Array) ? body.base64Array : []
        json(res, 200, { code: 1, description: 'Submit success', result: list.map((_, i) => `${base}/images/upload-${i}.png`) })
        return
      }
      case 'action': {
        const from = tasks.get(text(body.taskId))
        if (from === undefined) { json(res, 200, { code: 3, description: 'Related task does not exist or has expired', result: null }); return }
        const customId = text(body.customId)
        const action = actionOfCustomId(customId)
        if (action === 'CUSTOM_ZOOM' || action === 'INPAINT') {
          accepted(create(action, { ...common, status: 'MODAL', prompt: from.prompt }), 21)
          return
        }
        accepted(create(action, { ...common, prompt: from.prompt, promptEn: from.promptEn, properties: { customId, relatedTaskId: from.id } }))
        return
      }
      case 'modal': {
        const task = tasks.get(text(body.taskId))
        if (task === undefined || task.status !== 'MODAL') { json(res, 200, { code: 3, description: 'Related task does not exist or has expired', result: null }); return }
        Object.assign(task, { status: 'SUBMITTED', prompt: text(body.prompt) || task.prompt })
        accepted(task)
        return
      }
      case 'change': {
        const from = tasks.get(text(body.taskId))
        if (from === undefined) { json(res, 200, { code: 3, description: 'Related task does not exist or has expired', result: null }); return }
        accepted(create(text(body.action) || 'UPSCALE', { ...common, prompt: from.prompt, properties: { relatedTaskId: from.id, index: body.index } }))
        return
      }
      case 'simple-change': {
        const [taskId, op] = text(body.content).split(' ')
        const from = tasks.get(taskId ?? '')
        if (from === undefined || op === undefined) { json(res, 200, { code: 3, description: 'Related task does not exist or has expired', result: null }); return }
        const action = op.startsWith('U') ? 'UPSCALE' : op.startsWith('V') ? 'VARIATION' : 'REROLL'
        accepted(create(action, { ...common, prompt: from.prompt, properties: { relatedTaskId: from.id } }))
        return
      }
      default: {
        const action = ROUTE_ACTIONS[route]
        if (action === undefined) { json(res, 404, { code: 404, description: `unknown route ${route}` }); return }
        if (route === 'imagine' && text(body.prompt) === '') { json(res, 200, { code: 4, description: 'prompt cannot be empty', result: null }); return }
        const prompt = text(body.prompt)
        accepted(create(action, { ...common, prompt, promptEn: prompt, description: `/${route} ${prompt}`.trim() }))
      }
    }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = req.url ?? '/'
    const pathname = path.split('?')[0] ?? '/'
    const image = /^\/images\/([\w-]+)\.png$/.exec(pathname)
    if (req.method === 'GET' && image !== null) {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length }).end(PNG)
      return
    }
    const m = /^\/(?:mj-(fast|relax|turbo)\/)?mj(\/.*)$/.exec(pathname)
    const body = await readBody(req)
    const authorized = req.headers['mj-api-secret'] === key
    const entry: FakeMjRequest = { method: req.method ?? 'GET', path, route: m?.[2] ?? pathname, headers: req.headers, body, authorized, ...(m?.[1] === undefined ? {} : { mode: m[1] }) }
    requests.push(entry)
    if (m === null) { json(res, 404, { code: 404, description: 'not found' }); return }
    if (!authorized) { json(res, 401, { code: 401, description: 'unauthorized', result: null }); return }
    const route = entry.route
    const submitRoute = /^\/submit\/([\w-]+)$/.exec(route)
    if (req.method === 'POST' && submitRoute !== null) {
      const delay = submitScript[0]?.delayMs
      if (delay !== undefined) await new Promise((resolve) => setTimeout(resolve, delay))
      submit(res, submitRoute[1] ?? '', record(body))
      return
    }
    const isPoll = (req.method === 'POST' && route === '/task/list-by-condition') || (req.method === 'GET' && /^\/task\/[^/]+\/fetch$/.test(route))
    if (isPoll) {
      const scripted = pollScript.shift()
      if (scripted?.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs))
      if (scripted?.http !== undefined) { json(res, scripted.http, { error: 'scripted failure' }); return }
    }
    if (req.method === 'POST' && route === '/task/list-by-condition') {
      const ids = record(body).ids
      const list = Array.isArray(ids) ? ids.map((id) => tasks.get(text(id))).filter((x) => x !== undefined) : []
      json(res, 200, list)
      return
    }
    const fetch = /^\/task\/([^/]+)\/fetch$/.exec(route)
    if (req.method === 'GET' && fetch !== null) {
      const task = tasks.get(fetch[1] ?? '')
      if (task === undefined) json(res, 404, { code: 3, description: 'task not found', result: null })
      else json(res, 200, task)
      return
    }
    const seed = /^\/task\/([^/]+)\/image-seed$/.exec(route)
    if (req.method === 'GET' && seed !== null) {
      const task = tasks.get(seed[1] ?? '')
      if (task === undefined) json(res, 200, { code: 3, description: 'task not found', result: null })
      else if (task.status !== 'SUCCESS') json(res, 200, { code: 4, description: 'task status is not SUCCESS', result: null })
      else json(res, 200, { code: 1, description: 'success', result: `seed-${task.id}` })
      return
    }
    json(res, 404, { code: 404, description: `unknown route ${route}` })
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => { if (!res.headersSent) json(res, 500, { error: String(err) }) })
  })
  base = `http://127.0.0.1:${await listen(t, server)}`

  return {
    url: base,
    key,
    requests,
    tasks,
    imageBytes: PNG,
    submits: (route) => requests.filter((r) => r.authorized && r.method === 'POST' && r.route.startsWith('/submit/') && (route === undefined || r.route === `/submit/${route}`)),
    script: (...outcomes) => { submitScript.push(...outcomes) },
    scriptPoll: (...outcomes) => { pollScript.push(...outcomes) },
    task: (id) => tasks.get(id),
    progress: (id, percent) => { Object.assign(mustTask(id), { status: 'IN_PROGRESS', progress: percent, startTime: Date.now() }) },
    succeed: (id, o = {}) => {
      const task = mustTask(id)
      Object.assign(task, {
        status: 'SUCCESS',
        progress: '100%',
        startTime: task.startTime === 0 ? Date.now() : task.startTime,
        finishTime: Date.now(),
        imageUrl: o.imageUrl ?? `${base}/images/${id}.png`,
        buttons: o.buttons ?? defaultButtons(id)
      })
    },
    fail: (id, reason) => { Object.assign(mustTask(id), { status: 'FAILURE', failReason: reason, finishTime: Date.now() }) },
    update: (id, patch) => { Object.assign(mustTask(id), patch) }
  }
}
