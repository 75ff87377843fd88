import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ClassifiedFailure, UpstreamRequest } from '../core/adaptor.js'
import { cleanUpstreamMessage } from '../core/failure-text.js'
import { isRecord, parseJson } from '../core/json.js'
import { withOverrides } from '../core/overrides.js'
import type { TaskPollProtocol, TaskReport } from './types.js'

/**
 * Midjourney-Proxy (novicezk/midjourney-proxy, CHANNEL_TYPE.midjourney) and Midjourney-Proxy Plus
 * (CHANNEL_TYPE.midjourneyPlus): the actions and the model names they are routed and billed as,
 * the submit requests and answers, the task record both ways (the upstream's TaskDTO <-> the
 * `midjourneys` row), and the poll.
 */

/** Whether a channel type speaks Midjourney-Proxy. */
export function isMidjourneyChannel (type: number): boolean {
  return type === CHANNEL_TYPE.midjourney || type === CHANNEL_TYPE.midjourneyPlus
}

/** Midjourney's speed modes, as the `/{mode}/mj` routes and the prompt flags name them. */
export const MJ_MODES = ['fast', 'relax', 'turbo'] as const
export type MjMode = typeof MJ_MODES[number]

/** Midjourney-Proxy's result codes (its ReturnCode). */
export const MJ_CODE = {
  success: 1,
  notFound: 3,
  validation: 4,
  failure: 9,
  /** The task exists (also: a modal window waits for its input). */
  existed: 21,
  /** Queued: accepted, runs later. */
  inQueue: 22,
  queueRejected: 23,
  bannedPrompt: 24
} as const

/** Codes of a submit the upstream took: the task exists and has an id. */
const ACCEPTED_CODES: ReadonlySet<number> = new Set([MJ_CODE.success, MJ_CODE.existed, MJ_CODE.inQueue])

/** Each action and the model it is billed as (new-api's names). */
export const MJ_ACTION_MODELS = {
  IMAGINE: 'mj_imagine',
  VARIATION: 'mj_variation',
  UPSCALE: 'mj_upscale',
  REROLL: 'mj_reroll',
  BLEND: 'mj_blend',
  DESCRIBE: 'mj_describe',
  MODAL: 'mj_modal',
  ZOOM: 'mj_zoom',
  CUSTOM_ZOOM: 'mj_custom_zoom',
  SHORTEN: 'mj_shorten',
  HIGH_VARIATION: 'mj_high_variation',
  LOW_VARIATION: 'mj_low_variation',
  PAN: 'mj_pan',
  INPAINT: 'mj_inpaint',
  UPLOAD: 'mj_upload',
  VIDEO: 'mj_video',
  EDITS: 'mj_edits',
  SWAP_FACE: 'mj_swap_face'
} as const
export type MjAction = keyof typeof MJ_ACTION_MODELS

/** The model an action is billed as: `mj_<action>`, or `mj_<mode>_<action>` for a mode route. */
export function mjModelOf (action: MjAction, mode?: MjMode): string {
  const base = MJ_ACTION_MODELS[action]
  return mode === undefined ? base : `mj_${mode}_${base.slice(3)}`
}

/**
 * The action a button's customId asks for (the buttons of a finished task: U1, V1, 🔄, pan,
 * zoom, vary region, ...); undefined for an id no action is known for. Order matters:
 * `high_variation` contains `variation`.
 */
export function mjActionOfCustomId (customId: string): MjAction | undefined {
  const rules: Array<[RegExp, MjAction]> = [
    [/^MJ::JOB::upsample/, 'UPSCALE'],
    [/^MJ::JOB::high_variation::/, 'HIGH_VARIATION'],
    [/^MJ::JOB::low_variation::/, 'LOW_VARIATION'],
    [/^MJ::JOB::variation::/, 'VARIATION'],
    [/^MJ::JOB::reroll::/, 'REROLL'],
    [/^MJ::JOB::pan_/, 'PAN'],
    [/^MJ::JOB::animate/, 'VIDEO'],
    [/^MJ::Outpaint::/, 'ZOOM'],
    [/^MJ::CustomZoom::/, 'CUSTOM_ZOOM'],
    [/^MJ::Inpaint::/, 'INPAINT'],
    [/^MJ::Job::PicReader::/, 'IMAGINE'],
    [/^MJ::PromptAnalyzer::/, 'IMAGINE']
  ]
  return rules.find(([re]) => re.test(customId))?.[1]
}

/** The action of `/submit/change`'s `action` field (U, V and reroll of a grid). */
export function mjChangeAction (action: unknown): MjAction | undefined {
  return action === 'UPSCALE' || action === 'VARIATION' || action === 'REROLL' ? action : undefined
}

/**
 * `/submit/simple-change`'s `content`: "<taskId> U1" (upscale 1..4), "V2" (variation) or "R"
 * (reroll); undefined when it is not that.
 */
export function mjSimpleChange (content: unknown): { taskId: string, action: MjAction, index?: number } | undefined {
  if (typeof content !== 'string') return undefined
  const m = /^\s*(\S+)\s+(?:([UV])([1-4])|(R))\s*$/i.exec(content)
  if (m === null || m[1] === undefined) return undefined
  if (m[4] !== undefined) return { taskId: m[1], action: 'REROLL' }
  return { taskId: m[1], action: m[2]?.toUpperCase() === 'U' ? 'UPSCALE' : 'VARIATION', index: Number(m[3]) }
}

const MODE_FLAG = /\s*--(?:fast|relax|turbo)\b/gi

/** The prompt without --fast / --relax / --turbo (MjModeClearEnabled). */
export function clearModeFlags (prompt: string): string {
  return prompt.replace(MODE_FLAG, '').trim()
}

/** The prompt with `--<mode>` appended unless it already names a mode (plain Midjourney Proxy has no mode paths). */
function withModeFlag (prompt: string, mode: MjMode): string {
  return new RegExp(MODE_FLAG.source, 'i').test(prompt) ? prompt : `${prompt.trimEnd()} --${mode}`
}

/**
 * The URL of a Midjourney-Proxy endpoint (`path` after `/mj`, e.g. `/submit/imagine`): Plus
 * channels take the mode in the path (`/mj-fast/mj/...`), plain ones have one path per action.
 */
function mjUrl (channel: ChannelConfig, path: string, mode?: MjMode): string {
  const prefix = channel.type === CHANNEL_TYPE.midjourneyPlus && mode !== undefined ? `/mj-${mode}` : ''
  return `${channel.baseUrl}${prefix}/mj${path}`
}

/** A request to the channel: its key as `mj-api-secret`, the channel's header overrides applied. */
export function mjRequest (channel: ChannelConfig, method: 'GET' | 'POST', path: string, body?: unknown, mode?: MjMode): UpstreamRequest {
  const up: UpstreamRequest = {
    method,
    url: mjUrl(channel, path, mode),
    headers: { 'mj-api-secret': channel.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }
  return withOverrides(channel, up)
}

/**
 * The submit to `/submit/<route>` (or `/insight-face/swap`). For a mode route on a plain
 * Midjourney-Proxy channel, which has no mode paths, the mode goes into the prompt as a flag.
 */
export function mjSubmitRequest (channel: ChannelConfig, route: string, body: Readonly<Record<string, unknown>>, mode?: MjMode): UpstreamRequest {
  let out: Record<string, unknown> = { ...body }
  if (mode !== undefined && channel.type !== CHANNEL_TYPE.midjourneyPlus && typeof out['prompt'] === 'string' && out['prompt'] !== '') {
    out = { ...out, prompt: withModeFlag(out['prompt'], mode) }
  }
  const path = route === 'insight-face/swap' ? '/insight-face/swap' : `/submit/${route}`
  return mjRequest(channel, 'POST', path, out, mode)
}

/** A Midjourney-Proxy answer body: `{code, description, result, properties}`. */
interface MjAnswer {
  code: number
  description: string
  result: unknown
  properties?: Record<string, unknown>
}

/** What a submit answer says, in the terms of the submission machinery. */
type MjSubmitRead =
  | { accepted: true, code: number, upstreamId: string, answer: { status: number, body: MjAnswer }, properties: Record<string, unknown> }
  | { accepted: false, answer: { status: number, body: MjAnswer }, failure: ClassifiedFailure }

function refusal (status: number, answerStatus: number, code: number, description: string, action: ClassifiedFailure['action']): MjSubmitRead {
  return { accepted: false, answer: { status: answerStatus, body: { code, description, result: null } }, failure: { action, message: description, code: String(code) } }
}

/**
 * Reads a submit answer. Codes 1, 21 and 22 with a task id are accepted; any other code is the
 * upstream's refusal of this request (bad prompt, banned word, queue full), passed to the client
 * as Midjourney-Proxy sent it. A rejected key (401, 403) disables the channel; 429, 404 (a
 * channel without that endpoint), 5xx and unreadable answers go to another channel.
 *
 * `uploadId` is the id given to an accepted upload (`/submit/upload-discord-images`, whose result
 * is a list of image URLs, not a task id).
 */
export function readMjSubmit (status: number, body: Buffer, uploadId?: string): MjSubmitRead {
  if (status === 401 || status === 403) return refusal(status, 502, MJ_CODE.failure, `the upstream refused the channel's key (HTTP ${status})`, 'disable')
  if (status === 429 || status === 404 || status >= 500) return refusal(status, 502, MJ_CODE.failure, `the upstream failed (HTTP ${status})`, 'retry')
  const parsed = parseJson(body.toString('utf8'))
  if (status < 200 || status >= 300) {
    const description = isRecord(parsed) && typeof parsed['description'] === 'string' ? cleanUpstreamMessage(parsed['description']) : `the upstream refused the request (HTTP ${status})`
    const code = isRecord(parsed) && typeof parsed['code'] === 'number' ? parsed['code'] : MJ_CODE.validation
    return { accepted: false, answer: { status, body: { code, description, result: null } }, failure: { action: 'client', message: description, code: String(code) } }
  }
  if (!isRecord(parsed) || typeof parsed['code'] !== 'number') return refusal(status, 502, MJ_CODE.failure, 'the upstream answered something that is not a Midjourney-Proxy answer', 'retry')
  const code = parsed['code']
  const description = typeof parsed['description'] === 'string' ? cleanUpstreamMessage(parsed['description']) : ''
  const properties = isRecord(parsed['properties']) ? { ...parsed['properties'] } : {}
  const answer: MjAnswer = { code, description, result: parsed['result'] ?? null, properties }
  if (!ACCEPTED_CODES.has(code)) {
    return { accepted: false, answer: { status, body: answer }, failure: { action: 'client', message: description === '' ? `refused with code ${code}` : description, code: String(code) } }
  }
  const result = parsed['result']
  if (uploadId !== undefined && Array.isArray(result)) {
    return { accepted: true, code, upstreamId: uploadId, answer: { status, body: answer }, properties: { ...properties, urls: result } }
  }
  if ((typeof result !== 'string' && typeof result !== 'number') || String(result) === '') {
    return refusal(status, 502, MJ_CODE.failure, `the upstream accepted (code ${code}) without a task id`, 'retry')
  }
  return { accepted: true, code, upstreamId: String(result), answer: { status, body: { ...answer, result: String(result) } }, properties }
}

/** A button of a finished task. */
interface MjButton {
  customId: string
  emoji: string
  label: string
  type: number
  style: number
}

/** A task as Midjourney-Proxy's TaskDTO shows it (times in unix ms). */
interface MjTaskDto {
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
  buttons: MjButton[]
  properties: Record<string, unknown>
}

/** The columns of a `midjourneys` row the DTO is made of (times in unix seconds). */
interface MjTaskRow {
  mj_id: string
  action: string
  prompt: string
  prompt_en: string
  description: string
  state: string
  submit_time: number
  start_time: number
  finish_time: number
  image_url: string
  status: string
  progress: string
  fail_reason: string
  buttons: unknown
  properties: unknown
}

/** Midjourney-Proxy's statuses; CANCEL is a failure here (the task will never finish). */
const STATUSES: ReadonlySet<string> = new Set(['NOT_START', 'SUBMITTED', 'MODAL', 'IN_PROGRESS', 'FAILURE', 'SUCCESS'])

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '')
const ms = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.trunc(v) : 0)

function buttonsOf (v: unknown): MjButton[] {
  if (!Array.isArray(v)) return []
  return v.filter(isRecord).map((b) => ({
    customId: str(b['customId']),
    emoji: str(b['emoji']),
    label: str(b['label']),
    type: typeof b['type'] === 'number' ? b['type'] : 2,
    style: typeof b['style'] === 'number' ? b['style'] : 2
  })).filter((b) => b.customId !== '')
}

/** An upstream TaskDTO, checked field by field; undefined when it has no id. */
function readMjTask (v: unknown): MjTaskDto | undefined {
  if (!isRecord(v)) return undefined
  const id = str(v['id'])
  if (id === '') return undefined
  return {
    id,
    action: str(v['action']),
    prompt: str(v['prompt']),
    promptEn: str(v['promptEn']),
    description: str(v['description']),
    state: str(v['state']),
    submitTime: ms(v['submitTime']),
    startTime: ms(v['startTime']),
    finishTime: ms(v['finishTime']),
    imageUrl: str(v['imageUrl']),
    status: str(v['status']),
    progress: str(v['progress']),
    failReason: str(v['failReason']),
    buttons: buttonsOf(v['buttons']),
    properties: isRecord(v['properties']) ? { ...v['properties'] } : {}
  }
}

/**
 * What a TaskDTO says of the task, in the row's terms: status (CANCEL and unknown words as a
 * failure only when the upstream says it ended; otherwise left as submitted), progress, and the
 * columns to write: image, prompts, buttons and properties (jsonb, as JSON text), start and
 * finish in unix seconds. Never the billing columns, never submit_time (ours).
 */
function mjReport (dto: MjTaskDto): TaskReport {
  let status = dto.status
  let failReason: string | undefined
  if (status === 'CANCEL') {
    status = 'FAILURE'
    failReason = dto.failReason !== '' ? dto.failReason : 'cancelled upstream'
  } else if (!STATUSES.has(status)) {
    status = 'SUBMITTED'
  } else if (status === 'FAILURE') {
    failReason = dto.failReason !== '' ? dto.failReason : 'failed upstream'
  }
  const fields: Record<string, unknown> = {
    buttons: JSON.stringify(dto.buttons),
    properties: JSON.stringify(dto.properties)
  }
  if (dto.imageUrl !== '') fields['image_url'] = dto.imageUrl
  if (dto.prompt !== '') fields['prompt'] = dto.prompt
  if (dto.promptEn !== '') fields['prompt_en'] = dto.promptEn
  if (dto.description !== '') fields['description'] = dto.description
  if (dto.startTime > 0) fields['start_time'] = Math.floor(dto.startTime / 1000)
  if (dto.finishTime > 0) fields['finish_time'] = Math.floor(dto.finishTime / 1000)
  return {
    upstreamId: dto.id,
    status,
    ...(dto.progress === '' ? {} : { progress: dto.progress }),
    ...(failReason === undefined ? {} : { failReason }),
    fields
  }
}

/** The row's columns of a task just submitted: what the client sent and what the answer said. */
export function mjSubmitRow (r: { code: number, prompt: string, state: string, modal: boolean, properties: Record<string, unknown> }): Record<string, unknown> {
  return {
    code: r.code,
    prompt: r.prompt,
    state: r.state,
    properties: JSON.stringify(r.properties),
    buttons: '[]',
    status: r.modal ? 'MODAL' : 'SUBMITTED'
  }
}

/** A `midjourneys` row as Midjourney-Proxy's TaskDTO; `imageUrl` replaces the stored upstream URL (forwarding). */
export function mjTaskDto (row: MjTaskRow, imageUrl: string = row.image_url): MjTaskDto {
  return {
    id: row.mj_id,
    action: row.action,
    prompt: row.prompt,
    promptEn: row.prompt_en,
    description: row.description,
    state: row.state,
    submitTime: row.submit_time * 1000,
    startTime: row.start_time * 1000,
    finishTime: row.finish_time * 1000,
    imageUrl,
    status: row.status,
    progress: row.progress,
    failReason: row.fail_reason,
    buttons: buttonsOf(row.buttons),
    properties: isRecord(row.properties) ? { ...row.properties } : {}
  }
}

/**
 * The billing worker's poll of Midjourney-Proxy channels: `POST /mj/task/list-by-condition {ids}`,
 * up to 50 tasks a request; the answer is an array of TaskDTOs (those the channel knows).
 */
export const midjourneyPoll: TaskPollProtocol = {
  table: 'midjourneys',
  batch: 50,
  pollRequests: (channel, upstreamIds) => [mjRequest(channel, 'POST', '/task/list-by-condition', { ids: [...upstreamIds] })],
  readPoll: (status, body, upstreamIds) => {
    if (status < 200 || status >= 300) return []
    const parsed = parseJson(body.toString('utf8'))
    const list = Array.isArray(parsed) ? parsed : isRecord(parsed) && Array.isArray(parsed['result']) ? parsed['result'] : []
    const asked = new Set(upstreamIds)
    const reports: TaskReport[] = []
    for (const item of list) {
      const dto = readMjTask(item)
      if (dto !== undefined && asked.has(dto.id)) reports.push(mjReport(dto))
    }
    return reports
  }
}
