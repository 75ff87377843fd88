import {
  CHANNEL_TYPE,
  type ChannelCreateBody,
  type ChannelDetail,
  type ChannelTagBody,
  MULTI_KEY_MODES,
  type MultiKeyMode
} from '@modelgate/contracts'

/** docs/domain.md: a new channel's groups, auto-disable, priority and weight. */
export const DEFAULT_GROUPS = ['default']
/** docs/domain.md: the redirect template. */
export const MAPPING_TEMPLATE = { from: 'gpt-3.5-turbo', to: 'gpt-3.5-turbo-0125' }
/** docs/domain.md: type-specific defaults of `other` (Azure API version, Spark version). */
export const OTHER_DEFAULTS: Readonly<Record<number, string>> = { [CHANNEL_TYPE.azure]: '2023-06-01-preview', [CHANNEL_TYPE.spark]: 'v2.1' }
/** docs/domain.md: the lowest priority. */
export const PRIORITY_MIN = -999
/** The server creates at most this many channels in one batch. */
export const BATCH_MAX = 1000

/** Drawing actions of the Midjourney proxies (types 2 and 5), billed as models. */
export const MJ_ACTIONS = ['mj_imagine', 'mj_variation', 'mj_reroll', 'mj_blend', 'mj_upscale', 'mj_describe', 'mj_uploads']
/** Midjourney Proxy Plus has the extra actions of its newer API. */
export const MJ_PLUS_ACTIONS = [...MJ_ACTIONS, 'mj_zoom', 'mj_shorten', 'mj_modal', 'mj_inpaint', 'mj_custom_zoom', 'mj_high_variation', 'mj_low_variation', 'mj_pan', 'swap_face']
/** Music actions of Suno (type 36). */
export const SUNO_ACTIONS = ['suno_music', 'suno_lyrics']

/** What the base URL field means for a type; undefined: the generic optional base URL. */
export type BaseUrlKind = 'azure' | 'custom' | 'fastgpt' | 'suno' | 'codex' | 'generic'
/** What the `other` field means for a type; undefined: the type has none. */
export type OtherKind = 'azureVersion' | 'sparkVersion' | 'vertexRegion' | 'knowledgeBase' | 'accountId' | 'awsRegion' | 'tencentRegion' | 'difyMode'

export function baseUrlKind (type: number): BaseUrlKind {
  switch (type) {
    case CHANNEL_TYPE.azure: return 'azure'
    case CHANNEL_TYPE.custom: return 'custom'
    case CHANNEL_TYPE.fastgpt: return 'fastgpt'
    case CHANNEL_TYPE.suno: return 'suno'
    case CHANNEL_TYPE.codex: return 'codex'
    default: return 'generic'
  }
}

export function otherKind (type: number): OtherKind | undefined {
  switch (type) {
    case CHANNEL_TYPE.azure: return 'azureVersion'
    case CHANNEL_TYPE.spark: return 'sparkVersion'
    case CHANNEL_TYPE.vertex: return 'vertexRegion'
    case CHANNEL_TYPE.aiProxyLibrary: return 'knowledgeBase'
    case CHANNEL_TYPE.cloudflare: return 'accountId'
    case CHANNEL_TYPE.aws: return 'awsRegion'
    case CHANNEL_TYPE.tencent: return 'tencentRegion'
    case CHANNEL_TYPE.dify: return 'difyMode'
    default: return undefined
  }
}

/** Types whose key field has a hint of its own (`channel.form.keyHint.t<type>`): the key's form differs from a plain API key. */
export const KEY_HINT_TYPES: readonly number[] = [
  CHANNEL_TYPE.palm2, CHANNEL_TYPE.claude, CHANNEL_TYPE.baidu, CHANNEL_TYPE.chatglm, CHANNEL_TYPE.alibaba, CHANNEL_TYPE.spark,
  CHANNEL_TYPE.aiProxyLibrary, CHANNEL_TYPE.fastgpt, CHANNEL_TYPE.tencent, CHANNEL_TYPE.gemini, CHANNEL_TYPE.glm4v, CHANNEL_TYPE.aws,
  CHANNEL_TYPE.cohere, CHANNEL_TYPE.minimax, CHANNEL_TYPE.dify, CHANNEL_TYPE.jina, CHANNEL_TYPE.cloudflare, CHANNEL_TYPE.claudeCode, CHANNEL_TYPE.codex
]

/** Types with an extra setting JSON (custom and Codex). */
export const hasSetting = (type: number): boolean => type === CHANNEL_TYPE.custom || type === CHANNEL_TYPE.codex
/** Vertex AI takes a service-account JSON key. */
export const jsonKey = (type: number): boolean => type === CHANNEL_TYPE.vertex

/**
 * The models "fill related models" puts in: the fixed action lists of the drawing and music
 * types, otherwise the type's defaults from `GET /api/models`.
 */
export function relatedModels (type: number, defaults: Record<string, string[]>): string[] {
  if (type === CHANNEL_TYPE.midjourney) return MJ_ACTIONS
  if (type === CHANNEL_TYPE.midjourneyPlus) return MJ_PLUS_ACTIONS
  if (type === CHANNEL_TYPE.suno) return SUNO_ACTIONS
  return defaults[String(type)] ?? []
}

export interface MappingRow { from: string, to: string }

/** The drawer's fields as typed (numbers stay texts until submitted, so a half-typed value is kept). */
export interface ChannelForm {
  type: number
  name: string
  /** One credential per line; on edit blank keeps the stored key. */
  key: string
  batch: boolean
  organization: string
  baseUrl: string
  other: string
  models: string[]
  groups: string[]
  mapping: MappingRow[]
  testModel: string
  autoBan: boolean
  statusCodeMapping: string
  tag: string
  priority: string
  weight: string
  proxyUrl: string
  setting: string
  /** JSON object text merged into every upstream body; blank for none. */
  paramOverride: string
  /** JSON object text of headers (name -> text, `{api_key}` for the key); blank for none. */
  headerOverride: string
  multiKeyMode: MultiKeyMode
  /** 0 (or blank) for no limit. */
  maxInputTokens: string
  /** How many keys the saved channel holds (0 when creating): a blank key field keeps them. */
  storedKeyCount: number
  /** The saved channel's first key, masked ('' when creating): keys are write-only, this is all the console gets. */
  storedKeyHint: string
  /** Where the saved channel sends its key (undefined when creating): changing it needs the key typed again. */
  target?: { type: number, baseUrl: string, proxyUrl: string }
}

export type FormField = 'name' | 'key' | 'baseUrl' | 'other' | 'models' | 'groups' | 'statusCodeMapping' | 'priority' | 'weight' | 'proxyUrl' | 'setting' |
  'paramOverride' | 'headerOverride' | 'maxInputTokens'
/** Field -> i18n key of what is wrong with it. */
export type FormErrors = Partial<Record<FormField, string>>

/** The drawer's form as its sections share it: the fields, their setter and what is wrong with them. */
export interface ChannelFormState {
  form: ChannelForm
  set: <K extends keyof ChannelForm>(key: K, value: ChannelForm[K]) => void
  errors: FormErrors
  /** A field's error, translated. */
  errorText: (field: FormField) => string | undefined
  /** Under a field: its error (translated), else `text`. */
  help: (field: FormField, text: string) => string
  /** A new channel (else an edit of a saved one). */
  creating: boolean
}

export function emptyForm (): ChannelForm {
  return {
    type: CHANNEL_TYPE.openai,
    name: '',
    key: '',
    batch: false,
    organization: '',
    baseUrl: '',
    other: '',
    models: [],
    groups: [...DEFAULT_GROUPS],
    mapping: [],
    testModel: '',
    autoBan: true,
    statusCodeMapping: '',
    tag: '',
    priority: '0',
    weight: '0',
    proxyUrl: '',
    setting: '',
    paramOverride: '',
    headerOverride: '',
    multiKeyMode: 'random',
    maxInputTokens: '0',
    storedKeyCount: 0,
    storedKeyHint: ''
  }
}

/** Comma (or line) separated names: trimmed, blanks and duplicates dropped, order kept. */
export function splitNames (text: string): string[] {
  return [...new Set(text.split(/[,\n]/).map((s) => s.trim()).filter((s) => s !== ''))]
}

/** The redirect rows of a stored model_mapping (JSON object text; anything else gives none). */
export function mappingRows (text: string): MappingRow[] {
  if (text.trim() === '') return []
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return []
    return Object.entries(value as Record<string, unknown>).map(([from, to]) => ({ from, to: typeof to === 'string' ? to : JSON.stringify(to) }))
  } catch {
    return []
  }
}

/** docs/domain.md: only rows with both sides filled are kept; '' when none are. */
export function mappingJson (rows: readonly MappingRow[]): string {
  const kept: Record<string, string> = {}
  for (const { from, to } of rows) if (from.trim() !== '' && to.trim() !== '') kept[from.trim()] = to.trim()
  return Object.keys(kept).length === 0 ? '' : JSON.stringify(kept, null, 2)
}

export function formOf (channel: ChannelDetail): ChannelForm {
  return {
    type: channel.type,
    name: channel.name,
    key: '',
    batch: false,
    organization: channel.openai_organization ?? '',
    baseUrl: channel.base_url,
    other: channel.other,
    models: splitNames(channel.models),
    groups: splitNames(channel.group),
    mapping: mappingRows(channel.model_mapping),
    testModel: channel.test_model,
    autoBan: channel.auto_ban === 1,
    statusCodeMapping: channel.status_code_mapping,
    tag: channel.tag ?? '',
    priority: String(channel.priority),
    weight: String(channel.weight),
    proxyUrl: channel.proxy_url,
    setting: channel.setting,
    paramOverride: channel.param_override,
    headerOverride: channel.header_override,
    multiKeyMode: (MULTI_KEY_MODES as readonly string[]).includes(channel.multi_key_mode) ? channel.multi_key_mode as MultiKeyMode : 'random',
    maxInputTokens: String(channel.max_input_tokens),
    storedKeyCount: channel.key_count,
    storedKeyHint: channel.key_hint,
    target: { type: channel.type, baseUrl: channel.base_url, proxyUrl: channel.proxy_url }
  }
}

const cleanBaseUrl = (text: string): string => text.trim().replace(/\/+$/, '')

/**
 * Whether an edit changes where the key is sent (type, base URL, proxy): the server then wants
 * the key typed again, so nobody can point a channel elsewhere and have it send a key they cannot read.
 */
export function sendsKeyElsewhere (form: Pick<ChannelForm, 'type' | 'baseUrl' | 'proxyUrl' | 'target'>): boolean {
  const t = form.target
  if (t === undefined) return false
  return form.type !== t.type || cleanBaseUrl(form.baseUrl) !== cleanBaseUrl(t.baseUrl) || form.proxyUrl.trim() !== t.proxyUrl.trim()
}

/** An integer typed in a text field; undefined when it is not one. */
export function parseInteger (text: string): number | undefined {
  const trimmed = text.trim()
  if (!/^[-+]?\d+$/.test(trimmed)) return undefined
  const n = Number(trimmed)
  return Number.isSafeInteger(n) ? n : undefined
}

function jsonObject (text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

function isUrl (text: string, protocols: readonly string[]): boolean {
  try {
    return protocols.includes(new URL(text).protocol)
  } catch {
    return false
  }
}

const STATUS_CODE = /^[1-5]\d\d$/

/** A status code mapping as the server takes it: a JSON object of HTTP status -> HTTP status. */
export function validStatusCodeMapping (text: string): boolean {
  if (text.trim() === '') return true
  const obj = jsonObject(text)
  if (obj === undefined) return false
  return Object.entries(obj).every(([from, to]) => STATUS_CODE.test(from.trim()) && (typeof to === 'string' || typeof to === 'number') && STATUS_CODE.test(String(to).trim()))
}

/** The credentials of a key field, as the server counts them (a JSON key is one credential). */
export function keyLines (text: string): string[] {
  const trimmed = text.trim()
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed)
      return (Array.isArray(parsed) ? parsed : [parsed]).map((k) => typeof k === 'string' ? k.trim() : JSON.stringify(k)).filter((k) => k !== '')
    } catch {
      // Not JSON: an ordinary key list.
    }
  }
  return [...new Set(trimmed.split('\n').map((k) => k.trim()).filter((k) => k !== ''))]
}

/**
 * Whether the channel will hold several keys (the key text, or the stored keys while it is left
 * blank): only then does the multi-key mode matter. A batch makes one channel per key.
 */
export function isMultiKey (form: Pick<ChannelForm, 'key' | 'batch' | 'storedKeyCount'>): boolean {
  if (form.batch) return false
  return form.key.trim() === '' ? form.storedKeyCount > 1 : keyLines(form.key).length > 1
}

/** An HTTP header name (RFC 9110 token), as the server checks it. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** A header override as the server takes it: blank, or a JSON object of header names to one-line texts. */
export function validHeaderOverride (text: string): boolean {
  if (text.trim() === '') return true
  const obj = jsonObject(text)
  if (obj === undefined) return false
  return Object.entries(obj).every(([name, value]) => HEADER_NAME.test(name) && typeof value === 'string' && !/[\r\n\0]/.test(value))
}

/**
 * The i18n keys of what is wrong (docs/domain.md, Channel), with the server's messages: the
 * same rules are checked again there.
 */
export function validate (form: ChannelForm, creating: boolean): FormErrors {
  const errors: FormErrors = {}
  if (form.name.trim() === '') errors.name = 'channel.form.error.name'
  if (form.groups.length === 0) errors.groups = 'channel.form.error.groups'
  if (form.models.length === 0) errors.models = 'channel.form.error.models'
  const keys = keyLines(form.key)
  if (creating && keys.length === 0) errors.key = 'channel.form.error.key'
  else if (creating && form.batch && keys.length > BATCH_MAX) errors.key = 'channel.form.error.tooManyKeys'
  else if (jsonKey(form.type) && form.key.trim() !== '' && !validJsonKey(form.key)) errors.key = 'channel.form.error.jsonKey'
  else if (!creating && keys.length === 0 && sendsKeyElsewhere(form)) errors.key = 'channel.form.error.keyForNewTarget'
  const base = form.baseUrl.trim().replace(/\/+$/, '')
  if (base !== '' && !isUrl(base, ['http:', 'https:'])) errors.baseUrl = 'channel.form.error.baseUrl'
  if (otherKind(form.type) === 'vertexRegion' && form.other.trim().startsWith('{') && jsonObject(form.other) === undefined) errors.other = 'channel.form.error.region'
  if (!validStatusCodeMapping(form.statusCodeMapping)) errors.statusCodeMapping = 'channel.form.error.statusCodeMapping'
  if (hasSetting(form.type) && form.setting.trim() !== '' && jsonObject(form.setting) === undefined) errors.setting = 'channel.form.error.setting'
  const proxy = form.proxyUrl.trim()
  if (proxy !== '' && !isUrl(proxy, ['http:', 'https:', 'socks5:', 'socks5h:'])) errors.proxyUrl = 'channel.form.error.proxyUrl'
  const priority = parseInteger(form.priority)
  if (priority === undefined || priority < PRIORITY_MIN) errors.priority = 'channel.form.error.priority'
  if (parseInteger(form.weight) === undefined) errors.weight = 'channel.form.error.weight'
  if (form.paramOverride.trim() !== '' && jsonObject(form.paramOverride) === undefined) errors.paramOverride = 'channel.form.error.paramOverride'
  if (!validHeaderOverride(form.headerOverride)) errors.headerOverride = 'channel.form.error.headerOverride'
  const maxInput = form.maxInputTokens.trim() === '' ? 0 : parseInteger(form.maxInputTokens)
  if (maxInput === undefined || maxInput < 0) errors.maxInputTokens = 'channel.form.error.maxInputTokens'
  return errors
}

/** A service-account key: a JSON object, or (batch) a JSON array of them. */
function validJsonKey (text: string): boolean {
  try {
    const value: unknown = JSON.parse(text)
    const items = Array.isArray(value) ? value : [value]
    return items.length > 0 && items.every((k) => typeof k === 'object' && k !== null && !Array.isArray(k))
  } catch {
    return false
  }
}

/**
 * The fields the server takes, from a form that passed {@link validate}. The key is left out
 * when blank (an edit keeps the stored key); `other` gets the type's default when blank.
 */
export function bodyOf (form: ChannelForm): ChannelCreateBody {
  const body: ChannelCreateBody = {
    type: form.type,
    name: form.name.trim(),
    openai_organization: form.type === CHANNEL_TYPE.openai && form.organization.trim() !== '' ? form.organization.trim() : null,
    base_url: form.baseUrl.trim().replace(/\/+$/, ''),
    other: form.other.trim() === '' ? OTHER_DEFAULTS[form.type] ?? '' : form.other.trim(),
    models: form.models.join(','),
    group: form.groups.join(','),
    model_mapping: mappingJson(form.mapping),
    status_code_mapping: form.statusCodeMapping.trim(),
    auto_ban: form.autoBan ? 1 : 0,
    test_model: form.testModel.trim(),
    tag: form.tag.trim(),
    priority: parseInteger(form.priority) ?? 0,
    // docs/domain.md: a negative weight becomes 0.
    weight: Math.max(0, parseInteger(form.weight) ?? 0),
    proxy_url: form.proxyUrl.trim(),
    setting: hasSetting(form.type) ? form.setting.trim() : '',
    param_override: form.paramOverride.trim(),
    header_override: form.headerOverride.trim(),
    multi_key_mode: form.multiKeyMode,
    max_input_tokens: Math.max(0, parseInteger(form.maxInputTokens) ?? 0)
  }
  if (form.key.trim() !== '') body.key = form.key.trim()
  return body
}

/** The tag dialog's fields: blank means unchanged, except a cleared new tag name, which dissolves the tag. */
export interface TagForm {
  newTag: string
  models: string[]
  groups: string[]
  modelMapping: string
  priority: string
  weight: string
}

export type TagErrors = Partial<Record<'modelMapping' | 'priority' | 'weight', string>>

export function tagFormOf (tag: string): TagForm {
  return { newTag: tag, models: [], groups: [], modelMapping: '', priority: '', weight: '' }
}

/** docs/domain.md, tag edit: the mapping must be JSON, priority an integer, weight a non-negative integer. */
export function validateTag (form: TagForm): TagErrors {
  const errors: TagErrors = {}
  if (form.modelMapping.trim() !== '' && jsonObject(form.modelMapping) === undefined) errors.modelMapping = 'channel.form.error.modelMapping'
  if (form.priority.trim() !== '') {
    const p = parseInteger(form.priority)
    if (p === undefined || p < PRIORITY_MIN) errors.priority = 'channel.form.error.priority'
  }
  if (form.weight.trim() !== '') {
    const w = parseInteger(form.weight)
    if (w === undefined || w < 0) errors.weight = 'channel.tag.weightInvalid'
  }
  return errors
}

/** The body of `PUT /api/channel/tag`; undefined when nothing would change. */
export function tagBodyOf (tag: string, form: TagForm): ChannelTagBody | undefined {
  const body: ChannelTagBody = { tag }
  if (form.newTag.trim() !== tag) body.new_tag = form.newTag.trim()
  if (form.models.length > 0) body.models = form.models.join(',')
  if (form.groups.length > 0) body.groups = form.groups.join(',')
  if (form.modelMapping.trim() !== '') body.model_mapping = form.modelMapping.trim()
  if (form.priority.trim() !== '') body.priority = parseInteger(form.priority)
  if (form.weight.trim() !== '') body.weight = parseInteger(form.weight)
  return Object.keys(body).length === 1 ? undefined : body
}
