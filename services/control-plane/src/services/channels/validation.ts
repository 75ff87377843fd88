import { CHANNEL_STATUS, CHANNEL_TYPE, type ChannelCreateBody, MULTI_KEY_MODES } from '@modelgate/contracts'
import type { Channel, NewChannel } from '@modelgate/db'
import { CHANNEL_TYPE_NAMES } from '@modelgate/providers'
import { nameList } from '@modelgate/service'
import { CM } from '../../lib/channel-messages.js'
import { fail } from '../../lib/errors.js'
import type { Msg } from '../../lib/i18n.js'
import { checkOutbound } from '../../lib/outbound.js'
import type { Deps } from '../deps.js'

// Normalising and validating what an admin enters (docs/domain.md).

/** docs/domain.md: a new channel's groups. */
const DEFAULT_CHANNEL_GROUPS = ['default']
/** Lowest priority an admin may set (docs/domain.md). */
const PRIORITY_MIN = -999
/** Type-specific `other` defaults (docs/domain.md): Azure API version, Spark version. */
export const OTHER_DEFAULTS: Readonly<Record<number, string>> = { [CHANNEL_TYPE.azure]: '2023-06-01-preview', [CHANNEL_TYPE.spark]: 'v2.1' }

/**
 * The credentials of a key field, one per line. A JSON object (a cloud service-account key) is one
 * credential, written on one line; a JSON array holds one credential per element.
 */
export function keyLines (text: string): string[] {
  const trimmed = text.trim()
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed)
      const items = Array.isArray(parsed) ? parsed : [parsed]
      return items.map((k) => typeof k === 'string' ? k.trim() : JSON.stringify(k)).filter((k) => k !== '')
    } catch {
      // Not JSON after all: an ordinary key list.
    }
  }
  return [...new Set(trimmed.split('\n').map((k) => k.trim()).filter((k) => k !== ''))]
}

function parseObject (text: string, msg: Msg): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw fail(msg)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail(msg)
  return value as Record<string, unknown>
}

/** Model redirect JSON: rows with both sides filled are kept; '' when none are left. */
export function normalizeModelMapping (text: string): string {
  const obj = parseObject(text, CM.modelMappingNotJson)
  if (obj === undefined) return ''
  const kept: Record<string, string> = {}
  for (const [from, to] of Object.entries(obj)) {
    if (typeof to !== 'string') throw fail(CM.modelMappingValues)
    if (from.trim() !== '' && to.trim() !== '') kept[from.trim()] = to.trim()
  }
  return Object.keys(kept).length === 0 ? '' : JSON.stringify(kept, null, 2)
}

const STATUS_CODE = /^[1-5]\d\d$/

/** Parameter override JSON: an object, stored formatted; '' when blank or empty. */
function normalizeParamOverride (text: string): string {
  const obj = parseObject(text, CM.paramOverrideNotJson)
  return obj === undefined || Object.keys(obj).length === 0 ? '' : JSON.stringify(obj, null, 2)
}

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** Headers that frame the message or the connection: an override would break every request. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection'])

/** Header override JSON: header name -> text on one line (`{api_key}` stands for the key); '' when blank or empty. */
function normalizeHeaderOverride (text: string): string {
  const obj = parseObject(text, CM.headerOverrideNotJson)
  if (obj === undefined || Object.keys(obj).length === 0) return ''
  for (const [name, value] of Object.entries(obj)) {
    if (!HEADER_NAME.test(name)) throw fail(CM.headerOverrideName, { name: name.slice(0, 64) })
    if (RESERVED_HEADERS.has(name.toLowerCase())) throw fail(CM.headerOverrideReserved, { name })
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) throw fail(CM.headerOverrideValue, { name })
  }
  return JSON.stringify(obj, null, 2)
}

function checkMultiKeyMode (mode: string): string {
  if (!(MULTI_KEY_MODES as readonly string[]).includes(mode)) throw fail(CM.badMultiKeyMode)
  return mode
}

function normalizeStatusCodeMapping (text: string): string {
  const obj = parseObject(text, CM.statusCodeMappingNotJson)
  if (obj === undefined) return ''
  const kept: Record<string, string> = {}
  for (const [from, to] of Object.entries(obj)) {
    const target = typeof to === 'number' || typeof to === 'string' ? String(to).trim() : ''
    if (!STATUS_CODE.test(from.trim()) || !STATUS_CODE.test(target)) throw fail(CM.statusCodeMappingNotJson)
    kept[from.trim()] = target
  }
  return Object.keys(kept).length === 0 ? '' : JSON.stringify(kept, null, 2)
}

function isUrl (text: string, protocols: readonly string[]): boolean {
  try {
    return protocols.includes(new URL(text).protocol)
  } catch {
    return false
  }
}

/** Trimmed, without trailing slashes; refused unless http(s) when given. */
export function normalizeBaseUrl (text: string): string {
  const base = text.trim().replace(/\/+$/, '')
  if (base !== '' && !isUrl(base, ['http:', 'https:'])) throw fail(CM.badBaseUrl)
  return base
}

export function checkType (type: number): void {
  if (CHANNEL_TYPE_NAMES[type] === undefined) throw fail(CM.unknownType, { type })
}

export function checkPriority (priority: number): number {
  if (!Number.isSafeInteger(priority) || priority < PRIORITY_MIN) throw fail(CM.priorityRange)
  return priority
}

/** The channel fields an admin edits, as stored (models and groups as lists, key as plain lines). */
export interface ChannelDraft {
  name: string
  type: number
  openai_organization: string | null
  base_url: string
  other: string
  models: string[]
  groups: string[]
  model_mapping: string
  status_code_mapping: string
  auto_ban: number
  test_model: string
  priority: number
  weight: number
  tag: string | null
  proxy_url: string
  setting: string
  max_input_tokens: number
  param_override: string
  header_override: string
  multi_key_mode: string
}

type Fields = Partial<Omit<ChannelCreateBody, 'mode' | 'batch'>>

/** `draft` with the fields of `body` that are present applied, normalised and checked. */
export function applyFields (draft: ChannelDraft, body: Fields): ChannelDraft {
  const next = { ...draft }
  if (body.name !== undefined) next.name = body.name.trim()
  if (body.type !== undefined) next.type = body.type
  if (body.openai_organization !== undefined) next.openai_organization = body.openai_organization?.trim() || null
  if (body.base_url !== undefined) next.base_url = body.base_url
  if (body.other !== undefined) next.other = body.other.trim()
  if (body.models !== undefined) next.models = nameList(body.models)
  const groups = body.groups ?? body.group
  if (groups !== undefined) next.groups = nameList(groups)
  if (body.model_mapping !== undefined) next.model_mapping = body.model_mapping ?? ''
  if (body.status_code_mapping !== undefined) next.status_code_mapping = body.status_code_mapping ?? ''
  if (body.auto_ban !== undefined) next.auto_ban = body.auto_ban === true || body.auto_ban === 1 ? 1 : 0
  if (body.test_model !== undefined) next.test_model = body.test_model?.trim() ?? ''
  if (body.priority !== undefined) next.priority = body.priority
  if (body.weight !== undefined) next.weight = body.weight
  if (body.tag !== undefined) next.tag = body.tag?.trim() || null
  if (body.proxy_url !== undefined) next.proxy_url = body.proxy_url?.trim() ?? ''
  if (body.setting !== undefined) next.setting = body.setting?.trim() ?? ''
  if (body.max_input_tokens !== undefined) next.max_input_tokens = body.max_input_tokens
  if (body.param_override !== undefined) next.param_override = body.param_override ?? ''
  if (body.header_override !== undefined) next.header_override = body.header_override ?? ''
  if (body.multi_key_mode !== undefined) next.multi_key_mode = body.multi_key_mode.trim()

  if (next.name === '') throw fail(CM.nameRequired)
  checkType(next.type)
  if (next.groups.length === 0) throw fail(CM.groupsRequired)
  if (next.models.length === 0) throw fail(CM.modelsRequired)
  next.base_url = normalizeBaseUrl(next.base_url)
  if (next.other === '') next.other = OTHER_DEFAULTS[next.type] ?? ''
  next.model_mapping = normalizeModelMapping(next.model_mapping)
  next.status_code_mapping = normalizeStatusCodeMapping(next.status_code_mapping)
  if (next.setting !== '') parseObject(next.setting, CM.settingNotJson)
  next.param_override = normalizeParamOverride(next.param_override)
  next.header_override = normalizeHeaderOverride(next.header_override)
  next.multi_key_mode = checkMultiKeyMode(next.multi_key_mode)
  checkProxyUrl(next.proxy_url)
  next.priority = checkPriority(next.priority)
  next.weight = Math.max(0, next.weight)
  return next
}

export function draftOf (row: Channel): ChannelDraft {
  return {
    name: row.name,
    type: row.type,
    openai_organization: row.openai_organization,
    base_url: row.base_url,
    other: row.other,
    models: nameList(row.models),
    groups: nameList(row.group),
    model_mapping: row.model_mapping,
    status_code_mapping: row.status_code_mapping,
    auto_ban: row.auto_ban,
    test_model: row.test_model,
    priority: row.priority,
    weight: row.weight,
    tag: row.tag,
    proxy_url: row.proxy_url,
    setting: row.setting,
    max_input_tokens: row.max_input_tokens,
    param_override: row.param_override,
    header_override: row.header_override,
    multi_key_mode: row.multi_key_mode
  }
}

export const NEW_DRAFT: ChannelDraft = {
  name: '',
  type: CHANNEL_TYPE.openai,
  openai_organization: null,
  base_url: '',
  other: '',
  models: [],
  groups: DEFAULT_CHANNEL_GROUPS,
  model_mapping: '',
  status_code_mapping: '',
  auto_ban: 1,
  test_model: '',
  priority: 0,
  weight: 0,
  tag: null,
  proxy_url: '',
  setting: '',
  max_input_tokens: 0,
  param_override: '',
  header_override: '',
  multi_key_mode: 'random'
}

/** The columns of a draft. */
export function columnsOf (d: ChannelDraft): Omit<NewChannel, 'key'> {
  const { groups, models, ...rest } = d
  return { ...rest, group: groups.join(','), models: models.join(',') }
}

/** An admin's status change: enabled or disabled only, with the reason recorded. */
export function statusChange (status: number, actor: string): { status: typeof CHANNEL_STATUS.enabled | typeof CHANNEL_STATUS.disabled, reason: string } {
  if (status === CHANNEL_STATUS.enabled) return { status: CHANNEL_STATUS.enabled, reason: `enabled by admin ${actor}` }
  if (status === CHANNEL_STATUS.disabled) return { status: CHANNEL_STATUS.disabled, reason: `disabled by admin ${actor}` }
  throw fail(CM.statusOneOrTwo)
}

/**
 * The outbound guard on a channel's base URL and proxy, when saved or probed: cloud metadata
 * addresses, and private ones under OUTBOUND_PUBLIC_ONLY, are refused (the relay checks again
 * whenever it connects).
 */
export async function checkTargets ({ outbound }: Deps<'outbound'>, draft: { base_url: string, proxy_url: string }): Promise<void> {
  if (draft.base_url !== '') await checkOutbound(outbound, { url: draft.base_url })
  if (draft.proxy_url !== '') await checkOutbound(outbound, { url: draft.proxy_url }, { proxy: true })
}

/** '' (direct) or an http(s)/socks5(h) proxy URL: what the relay's dispatcher accepts. */
export function checkProxyUrl (proxyUrl: string): void {
  if (proxyUrl !== '' && !isUrl(proxyUrl, ['http:', 'https:', 'socks5:', 'socks5h:'])) throw fail(CM.badProxyUrl)
}

