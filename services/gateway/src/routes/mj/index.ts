import { CHANNEL_STATUS } from '@modelgate/contracts'
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import { PassThrough } from 'node:stream'
import { findOwnTasks, type Midjourney, releaseTaskClaims } from '@modelgate/db'
import {
  clearModeFlags,
  isMidjourneyChannel,
  MJ_CODE,
  MJ_MODES,
  type MjAction,
  mjActionOfCustomId,
  mjChangeAction,
  type MjMode,
  mjModelOf,
  mjRequest,
  mjSimpleChange,
  mjSubmitRequest,
  mjSubmitRow,
  mjTaskDto,
  readMjSubmit
} from '@modelgate/providers'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { pinnedChannel } from '../../relay/admission.js'
import { authenticate, type Caller } from '../../relay/auth.js'
import type { RouteDeps } from '../../relay/deps.js'
import { RelayError, relayMessage } from '../../relay/errors.js'
import { channelConfig, type RelayChannel } from '../../relay/state.js'
import { ClientGone, readAll, send } from '../../relay/upstream.js'
import { submitTask } from '../../tasks/submit.js'

/** Submit routes (`/mj/submit/<route>`) whose action does not depend on the body. */
const FIXED_ACTIONS: Readonly<Record<string, MjAction>> = {
  imagine: 'IMAGINE',
  describe: 'DESCRIBE',
  blend: 'BLEND',
  shorten: 'SHORTEN',
  'upload-discord-images': 'UPLOAD',
  video: 'VIDEO',
  edits: 'EDITS',
  modal: 'MODAL'
}
/** Submit routes that act on an earlier task (it must be the caller's, and it names the channel). */
const FOLLOW_UP_ROUTES = ['change', 'simple-change', 'action'] as const
/** Most task ids one list-by-condition may ask about. */
const MAX_LIST_IDS = 500
/** Largest image the proxy passes on, and the longest it spends on one. */
const MAX_IMAGE_BYTES = 50 * 1024 * 1024
const IMAGE_DEADLINE_MS = 5 * 60_000
/** Largest image-seed answer read. */
const MAX_SEED_ANSWER = 64 * 1024

/** A refusal in Midjourney-Proxy's shape: its result code, a description, the HTTP status. */
class MjError extends Error {
  readonly status: number
  readonly code: number

  constructor (status: number, code: number, description: string) {
    super(description)
    this.status = status
    this.code = code
  }
}

/** Midjourney-Proxy's answer shape for a refusal. */
function mjRefusal (reply: FastifyReply, status: number, code: number, description: string, error?: string | null): FastifyReply {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8')
    .send({ code, description, result: null, ...(error === undefined || error === null ? {} : { properties: { error } }) })
}

/** The result code a gateway refusal of `status` carries: 3 not found, 4 the request's fault, 9 ours or the upstream's. */
function codeOfStatus (status: number): number {
  if (status === 404) return MJ_CODE.notFound
  return status >= 500 ? MJ_CODE.failure : MJ_CODE.validation
}

function bodyObject (body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw new MjError(400, MJ_CODE.validation, 'the request body must be a JSON object')
  }
  return { ...(body as Record<string, unknown>) }
}

/**
 * The caller's own tasks among `ids`, one per task id (the latest row: a modal submission keeps
 * the id of the task it completes). Another user's task is simply absent.
 */
async function ownTasks (deps: RouteDeps, caller: Caller, ids: readonly string[]): Promise<Midjourney[]> {
  const rows = await findOwnTasks(deps.db, 'midjourneys', caller.record.user.id, ids)
  const latest = new Map<string, Midjourney>()
  for (const row of rows) {
    const seen = latest.get(row.mj_id)
    if (seen === undefined || seen.id < row.id) latest.set(row.mj_id, row)
  }
  return [...latest.values()]
}

async function ownTask (deps: RouteDeps, caller: Caller, id: string): Promise<Midjourney> {
  const [row] = id === '' ? [] : await ownTasks(deps, caller, [id])
  if (row === undefined) throw new MjError(404, MJ_CODE.notFound, 'task not found')
  return row
}

/**
 * The image proxy's check value for a task: only its owner learns it (in fetch answers), and it
 * cannot be derived from the task id alone (the charge's request id is a random UUID), so a
 * guessed id does not show another user's image.
 */
function imageSignature (row: Pick<Midjourney, 'mj_id' | 'request_id'>): string {
  return createHash('sha256').update(`mj-image\u0000${row.request_id}\u0000${row.mj_id}`).digest('hex').slice(0, 32)
}

/** The task as Midjourney-Proxy shows it; with MjForwardUrlEnabled its image through this gateway. */
function taskAnswer (deps: RouteDeps, row: Midjourney): ReturnType<typeof mjTaskDto> {
  const o = deps.state.options
  if (!o.bool('MjForwardUrlEnabled') || row.image_url === '') return mjTaskDto(row)
  const server = o.str('ServerAddress').replace(/\/+$/, '')
  return mjTaskDto(row, `${server}/mj/image/${encodeURIComponent(row.mj_id)}?sig=${imageSignature(row)}`)
}

/** The channel an earlier task lives on, when it can still take requests. */
function channelOfTask (deps: RouteDeps, row: Midjourney): RelayChannel {
  const channel = deps.state.channels.get(row.channel_id)
  if (channel === undefined || channel.status !== CHANNEL_STATUS.enabled || !isMidjourneyChannel(channel.type)) {
    throw new MjError(503, MJ_CODE.failure, 'the channel of this task is no longer available')
  }
  return channel
}

/**
 * The client's notifyHook: dropped unless MjNotifyEnabled; with it, kept only when it is an
 * http(s) URL whose host the outbound guard accepts as a user-supplied (public) target, since the
 * upstream will call it.
 */
async function checkNotifyHook (deps: RouteDeps, body: Record<string, unknown>): Promise<void> {
  const hook = body['notifyHook']
  if (hook === undefined || hook === null || hook === '') {
    delete body['notifyHook']
    return
  }
  if (!deps.state.options.bool('MjNotifyEnabled')) {
    delete body['notifyHook']
    return
  }
  if (typeof hook !== 'string') throw new MjError(400, MJ_CODE.validation, 'notifyHook must be a URL')
  try {
    await deps.outbound.checkUrl(hook, 'user')
  } catch (err) {
    throw new MjError(400, MJ_CODE.validation, `notifyHook refused: ${(err as Error).message}`)
  }
}

/** The model a request is billed as: the mode's own model when the group has a channel for it. */
function billedModel (deps: RouteDeps, group: string, action: MjAction, mode: MjMode | undefined): string {
  if (mode === undefined) return mjModelOf(action)
  const own = mjModelOf(action, mode)
  return deps.state.serves(group, own) ? own : mjModelOf(action)
}

/** What a follow-up acts on and as what: change, simple-change, action and modal. */
function followUp (route: string, body: Record<string, unknown>): { action: MjAction, taskId: string } | undefined {
  const taskId = typeof body['taskId'] === 'string' ? body['taskId'] : ''
  switch (route) {
    case 'change': {
      const action = mjChangeAction(body['action'])
      if (action === undefined) throw new MjError(400, MJ_CODE.validation, 'action must be UPSCALE, VARIATION or REROLL')
      if (action !== 'REROLL' && !(typeof body['index'] === 'number' && body['index'] >= 1 && body['index'] <= 4)) {
        throw new MjError(400, MJ_CODE.validation, 'index must be 1 to 4')
      }
      return { action, taskId }
    }
    case 'simple-change': {
      const change = mjSimpleChange(body['content'])
      if (change === undefined) throw new MjError(400, MJ_CODE.validation, 'content must be "<taskId> U1..U4 | V1..V4 | R"')
      return { action: change.action, taskId: change.taskId }
    }
    case 'action': {
      const customId = typeof body['customId'] === 'string' ? body['customId'] : ''
      const action = mjActionOfCustomId(customId)
      if (action === undefined) throw new MjError(400, MJ_CODE.validation, 'customId is missing or names no known action')
      return { action, taskId }
    }
    case 'modal':
      return { action: 'MODAL', taskId }
    default:
      return undefined
  }
}

/**
 * One submit: the action (from the route, the change or the button's customId), the options
 * (account filter, notify hook, mode flags), the earlier task of a follow-up (the caller's own,
 * finished when MjActionCheckSuccessEnabled, its channel the only one), then submitTask with
 * Midjourney-Proxy's request and answer.
 */
async function submit (deps: RouteDeps, req: FastifyRequest, reply: FastifyReply, route: string, mode: MjMode | undefined): Promise<FastifyReply> {
  const caller = await authenticate(deps.callers, req)
  const body = bodyObject(req.body)
  const o = deps.state.options
  const follow = followUp(route, body)
  const action = follow?.action ?? FIXED_ACTIONS[route] ?? (route === 'insight-face/swap' ? 'SWAP_FACE' : undefined)
  if (action === undefined) throw new MjError(404, MJ_CODE.notFound, `unknown submit route ${route}`)

  if (!o.bool('MjAccountFilterEnabled')) delete body['accountFilter']
  await checkNotifyHook(deps, body)
  if (o.bool('MjModeClearEnabled') && typeof body['prompt'] === 'string') body['prompt'] = clearModeFlags(body['prompt'])

  let channel = pinnedChannel(deps.state, caller, isMidjourneyChannel)
  if (follow !== undefined) {
    if (follow.taskId === '') throw new MjError(400, MJ_CODE.validation, 'taskId is required')
    const origin = await ownTask(deps, caller, follow.taskId)
    if (o.bool('MjActionCheckSuccessEnabled')) {
      const needed = route === 'modal' ? 'MODAL' : 'SUCCESS'
      if (origin.status !== needed) throw new MjError(400, MJ_CODE.validation, `the task's status is ${origin.status}, not ${needed}`)
    }
    channel = channelOfTask(deps, origin)
  }

  const uploadId = action === 'UPLOAD' ? `upload-${randomUUID()}` : undefined
  const prompt = typeof body['prompt'] === 'string' ? body['prompt'] : ''
  const state = typeof body['state'] === 'string' ? body['state'] : ''
  const opensModal = action === 'CUSTOM_ZOOM' || action === 'INPAINT'
  const outcome = await submitTask(deps, req, caller, {
    table: 'midjourneys',
    model: billedModel(deps, caller.group, action, mode),
    action,
    accepts: isMidjourneyChannel,
    ...(channel === undefined ? {} : { channel }),
    request: (c) => mjSubmitRequest(c, route, body, mode),
    read: (status, answer) => {
      const r = readMjSubmit(status, answer, uploadId)
      if (!r.accepted) return r
      const row = mjSubmitRow({ code: r.code, prompt, state, modal: opensModal && r.code === MJ_CODE.existed, properties: r.properties })
      // An upload is done when accepted: nothing to poll.
      if (uploadId !== undefined) Object.assign(row, { status: 'SUCCESS', progress: '100%', finish_time: Math.floor(Date.now() / 1000) })
      return { accepted: true, upstreamId: r.upstreamId, answer: r.answer, row }
    }
  })
  return reply.code(outcome.answer.status).send(outcome.answer.body)
}

/** `/mj/task/{id}/image-seed`, asked of the channel the caller's task lives on. */
async function imageSeed (deps: RouteDeps, req: FastifyRequest<{ Params: { id: string } }>, mode: MjMode | undefined): Promise<unknown> {
  const caller = await authenticate(deps.callers, req)
  const row = await ownTask(deps, caller, req.params.id)
  const channel = channelOfTask(deps, row)
  const config = channelConfig(channel)
  if (config.key === '') throw new MjError(503, MJ_CODE.failure, 'the channel of this task has no enabled key')
  let status: number
  let text: string
  try {
    const res = await send(mjRequest(config, 'GET', `/task/${encodeURIComponent(row.mj_id)}/image-seed`, undefined, mode), new ClientGone(), { idleMs: deps.upstreamTimeoutMs }, deps.outbound.dispatcher(channel.proxyUrl))
    status = res.status
    text = (await readAll(res, MAX_SEED_ANSWER)).toString('utf8')
  } catch (err) {
    req.log.warn({ err, channel: channel.id }, 'image-seed upstream unreachable')
    throw new MjError(502, MJ_CODE.failure, 'the upstream is unreachable')
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (status === 401 || status === 403 || status >= 500 || typeof parsed !== 'object' || parsed === null) {
    throw new MjError(502, MJ_CODE.failure, `the upstream failed (HTTP ${status})`)
  }
  return parsed
}

/**
 * `/mj/image/{id}?sig=`: the task's stored upstream image, streamed through the outbound guard
 * (the channel's proxy when it has one), image and video types only, at most MAX_IMAGE_BYTES and
 * IMAGE_DEADLINE_MS. No key: browsers load it in <img>; the signature stands for the owner.
 */
async function imageProxy (deps: RouteDeps, req: FastifyRequest<{ Params: { id: string }, Querystring: { sig?: string } }>, reply: FastifyReply): Promise<FastifyReply> {
  const sig = typeof req.query.sig === 'string' ? req.query.sig : ''
  const rows = await deps.db.selectFrom('midjourneys').select(['mj_id', 'request_id', 'image_url', 'channel_id'])
    .where('mj_id', '=', req.params.id).where('image_url', '<>', '').orderBy('id', 'desc').limit(10).execute()
  const given = Buffer.from(sig)
  const row = rows.find((r) => {
    const expected = Buffer.from(imageSignature(r))
    return expected.length === given.length && timingSafeEqual(expected, given)
  })
  if (row === undefined) throw new MjError(404, MJ_CODE.notFound, 'image not found')
  if (!/^https?:\/\//i.test(row.image_url)) throw new MjError(502, MJ_CODE.failure, 'the task has no image address')
  const channel = deps.state.channels.get(row.channel_id)
  const gone = new ClientGone()
  reply.raw.on('close', () => { gone.abort() })
  const deadline = setTimeout(() => { gone.abort() }, IMAGE_DEADLINE_MS)
  let res: Awaited<ReturnType<typeof send>>
  try {
    res = await send({ method: 'GET', url: row.image_url, headers: { accept: 'image/*,video/*' } }, gone, { idleMs: deps.upstreamTimeoutMs }, deps.outbound.dispatcher(channel?.proxyUrl))
  } catch (err) {
    clearTimeout(deadline)
    req.log.warn({ err, task: row.mj_id }, 'image upstream unreachable')
    throw new MjError(502, MJ_CODE.failure, 'the image could not be fetched')
  }
  const type = res.contentType.split(';')[0]?.trim().toLowerCase() ?? ''
  if (res.status !== 200 || !/^(image|video)\//.test(type)) {
    clearTimeout(deadline)
    res.abort(new Error('not an image'))
    await res.read(() => true).catch(() => {})
    throw new MjError(502, MJ_CODE.failure, `the image could not be fetched (HTTP ${res.status})`)
  }
  const out = new PassThrough()
  out.on('drain', () => { res.resume() })
  let size = 0
  res.read((chunk) => {
    size += chunk.length
    if (size > MAX_IMAGE_BYTES) {
      res.abort(new Error(`image larger than ${MAX_IMAGE_BYTES} bytes`))
      return true
    }
    return out.write(chunk)
  }).then(() => { out.end() }, (err: unknown) => { out.destroy(err as Error) }).finally(() => { clearTimeout(deadline) })
  return reply.code(200)
    .header('content-type', res.contentType)
    .header('cache-control', 'private, max-age=86400')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .send(out)
}

/**
 * `/mj/notify`: an upstream's callback. Its content is never trusted (anyone can post here): it
 * only lets the pollers look at the named task at once; what is written comes from the poll.
 */
async function notify (deps: RouteDeps, req: FastifyRequest): Promise<unknown> {
  const body = req.body
  const id = typeof body === 'object' && body !== null && !Buffer.isBuffer(body) ? (body as Record<string, unknown>)['id'] : undefined
  if (typeof id === 'string' && /^[\w-]{1,64}$/.test(id)) {
    const rows = await deps.db.selectFrom('midjourneys').select('id').where('mj_id', '=', id)
      .where('status', 'not in', ['SUCCESS', 'FAILURE']).limit(10).execute()
    await releaseTaskClaims(deps.db, 'midjourneys', rows.map((r) => r.id))
  }
  return { code: MJ_CODE.success, description: 'received', result: null }
}

/**
 * Midjourney-Proxy's API under /mj and /{fast,relax,turbo}/mj (docs/domain.md): submits
 * billed per action at ModelPrice, the caller's own tasks from Postgres, image-seed from the
 * task's channel, the image proxy and the notify hook. Every refusal in Midjourney-Proxy's shape
 * `{code, description, result}`. Midjourney-Proxy clients may send the gateway key as
 * `mj-api-secret`.
 */
export default async function midjourneyRoutes (mj: FastifyInstance) {
  const deps = mj.relayDeps
  mj.setErrorHandler(async (err: FastifyError, req, reply) => {
    if (err instanceof MjError) return mjRefusal(reply, err.status, err.code, err.message)
    if (err instanceof RelayError) {
      if (err.headers !== undefined) void reply.headers(err.headers)
      return mjRefusal(reply, err.status, codeOfStatus(err.status), relayMessage(req, err), err.code)
    }
    const status = err.statusCode ?? 500
    if (status >= 500) req.log.error({ err }, 'midjourney route error')
    return mjRefusal(reply, status >= 500 ? 500 : status, codeOfStatus(status), status >= 500 ? 'internal error' : err.message)
  })
  // Midjourney-Proxy clients send their secret as mj-api-secret: here it is the gateway key.
  mj.addHook('onRequest', async (req) => {
    const secret = req.headers['mj-api-secret']
    if (req.headers.authorization === undefined && typeof secret === 'string' && secret !== '') req.headers.authorization = `Bearer ${secret}`
  })

  for (const mode of [undefined, ...MJ_MODES]) {
    const prefix = mode === undefined ? '/mj' : `/${mode}/mj`
    for (const route of [...Object.keys(FIXED_ACTIONS), ...FOLLOW_UP_ROUTES, 'insight-face/swap']) {
      const path = route === 'insight-face/swap' ? `${prefix}/insight-face/swap` : `${prefix}/submit/${route}`
      mj.post(path, async (req, reply) => await submit(deps, req, reply, route, mode))
    }
    mj.get<{ Params: { id: string } }>(`${prefix}/task/:id/fetch`, async (req) => {
      const caller = await authenticate(deps.callers, req)
      return taskAnswer(deps, await ownTask(deps, caller, req.params.id))
    })
    mj.post(`${prefix}/task/list-by-condition`, async (req) => {
      const caller = await authenticate(deps.callers, req)
      const raw = req.body === undefined ? undefined : bodyObject(req.body)['ids']
      if (raw !== undefined && !Array.isArray(raw)) throw new MjError(400, MJ_CODE.validation, 'ids must be a list of task ids')
      const ids = (raw ?? []).filter((id): id is string => typeof id === 'string' && id !== '')
      if (ids.length > MAX_LIST_IDS) throw new MjError(400, MJ_CODE.validation, `at most ${MAX_LIST_IDS} ids at once`)
      const rows = await ownTasks(deps, caller, ids)
      const order = new Map(ids.map((id, i) => [id, i]))
      return rows.sort((a, b) => (order.get(a.mj_id) ?? 0) - (order.get(b.mj_id) ?? 0)).map((row) => taskAnswer(deps, row))
    })
    mj.get<{ Params: { id: string } }>(`${prefix}/task/:id/image-seed`, async (req) => await imageSeed(deps, req, mode))
    mj.get<{ Params: { id: string }, Querystring: { sig?: string } }>(`${prefix}/image/:id`, async (req, reply) => await imageProxy(deps, req, reply))
    mj.post(`${prefix}/notify`, async (req) => await notify(deps, req))
  }
}
