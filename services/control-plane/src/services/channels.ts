import { CHANNEL_STATUS, CHANNEL_TYPE, type ChannelCreateBody, type ChannelDetail, type ChannelListItem, type ChannelPage, type ChannelSearchQuery, type ChannelTagBody, type ChannelTagRow, type ChannelUpdateBody, type ChannelView, type FetchModelsBody, MULTI_KEY_MODES } from '@modelgate/contracts'
import {
  type Channel,
  type ChannelFilter,
  type ChannelUpdate,
  deleteChannel,
  deleteDisabledChannels,
  findAllChannelModels,
  findChannelById,
  findChannelKeysAfter,
  findChannelKeysByIds,
  findChannelsByStatus,
  insertChannels,
  listChannels,
  listChannelsByTag,
  type NewChannel,
  type PublicChannel,
  pruneChannelKeyStates,
  rebuildAllAbilities,
  updateChannel,
  updateChannelsByTag
} from '@modelgate/db'
import { adaptorFor, CHANNEL_TYPE_NAMES, type ChannelConfig, type CredentialStore, defaultModelsByType, fetchModels } from '@modelgate/providers'
import { acquireLock, channelKeys, keyFingerprint, nameList, parseJsonObject, redisCredentialStore, releaseLock, renewLock, testChannels, testOneChannel } from '@modelgate/service'
import type { FastifyInstance } from 'fastify'
import { fail } from '../lib/errors.js'
import { pageOf } from '../lib/paging.js'
import type { Msg } from '../lib/i18n.js'
import { CM } from '../lib/channel-messages.js'
import { checkOutbound } from '../lib/outbound.js'
import { keyHint } from './channel-keys.js'

/** docs/domain.md: a new channel's groups. */
const DEFAULT_CHANNEL_GROUPS = ['default']
/** Lowest priority an admin may set (docs/domain.md). */
const PRIORITY_MIN = -999
/** Channels one batch may create. */
const BATCH_MAX = 1000
/** Type-specific `other` defaults (docs/domain.md): Azure API version, Spark version. */
const OTHER_DEFAULTS: Readonly<Record<number, string>> = { 3: '2023-06-01-preview', 18: 'v2.1' }
/** Keys are matched by substring only for keywords this long: shorter ones would match nearly every key. */
const KEY_SEARCH_MIN = 4
const KEY_SEARCH_BATCH = 500
const FETCH_MODELS_TIMEOUT_MS = 20_000

// ---------------------------------------------------------------------------------------------
// Views

function otherInfo (info: Record<string, unknown>): ChannelView['other_info'] {
  const out: ChannelView['other_info'] = {}
  if (typeof info.status_reason === 'string') out.status_reason = info.status_reason
  if (typeof info.status_time === 'number') out.status_time = info.status_time
  return out
}

/** What a view may say of a channel's key: how many credentials it holds and the first one's hint. */
interface KeyInfo { count: number, hint: string }
const NO_KEY: KeyInfo = { count: 0, hint: '' }

/** The key info of a sealed key; none when CRYPTO_SECRET cannot open it. */
function keyInfo (app: FastifyInstance, row: Pick<Channel, 'key'>): KeyInfo {
  try {
    const keys = channelKeys(row, app.secrets)
    return { count: keys.length, hint: keys[0] === undefined ? '' : keyHint(keys[0]) }
  } catch {
    return NO_KEY
  }
}

/** Key infos of the channels `ids` (their keys are sealed, so they are opened here). */
async function keyInfos (app: FastifyInstance, ids: readonly number[]): Promise<Map<number, KeyInfo>> {
  const rows = await findChannelKeysByIds(app.db, ids)
  return new Map(rows.map((r) => [r.id, keyInfo(app, r)]))
}

/** A channel as lists and the detail show it: never the key, only how many it holds and a hint. */
function channelView (row: PublicChannel, key: KeyInfo): ChannelView {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    openai_organization: row.openai_organization,
    max_input_tokens: row.max_input_tokens,
    base_url: row.base_url,
    other: row.other,
    models: row.models,
    group: row.group,
    model_mapping: row.model_mapping,
    status_code_mapping: row.status_code_mapping,
    auto_ban: row.auto_ban,
    test_model: row.test_model,
    priority: row.priority,
    weight: row.weight,
    tag: row.tag,
    proxy_url: row.proxy_url,
    setting: row.setting,
    status: row.status,
    response_time: row.response_time,
    test_time: row.test_time,
    balance: row.balance,
    balance_updated_time: row.balance_updated_time,
    used_quota: row.used_quota,
    created_time: row.created_time,
    other_info: otherInfo(row.other_info),
    param_override: row.param_override,
    header_override: row.header_override,
    multi_key_mode: row.multi_key_mode,
    key_states: row.key_states,
    key_count: key.count,
    key_hint: key.hint
  }
}

/** One channel's view with its key info read from the database. */
async function viewOf (app: FastifyInstance, row: PublicChannel): Promise<ChannelView> {
  return channelView(row, (await keyInfos(app, [row.id])).get(row.id) ?? NO_KEY)
}

const common = <T>(values: T[]): T | undefined => values.every((v) => v === values[0]) ? values[0] : undefined
const union = (lists: string[]): string => [...new Set(lists.flatMap((l) => nameList(l)))].sort().join(',')

function tagRow (tag: string, children: PublicChannel[], infos: ReadonlyMap<number, KeyInfo>): ChannelTagRow {
  const views = children.map((c) => channelView(c, infos.get(c.id) ?? NO_KEY))
  return {
    tag,
    children: views,
    status: common(views.map((c) => c.status)) ?? 0,
    enabled_count: views.filter((c) => c.status === CHANNEL_STATUS.enabled).length,
    type: common(views.map((c) => c.type)) ?? null,
    priority: common(views.map((c) => c.priority)) ?? null,
    weight: common(views.map((c) => c.weight)) ?? null,
    group: union(views.map((c) => c.group)),
    models: union(views.map((c) => c.models)),
    used_quota: views.reduce((s, c) => s + c.used_quota, 0),
    balance: views.reduce((s, c) => s + c.balance, 0)
  }
}

// ---------------------------------------------------------------------------------------------
// Normalising and validating input (docs/domain.md)

/**
 * The credentials of a key field, one per line. A JSON object (a cloud service-account key) is one
 * credential, written on one line; a JSON array holds one credential per element.
 */
function keyLines (text: string): string[] {
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
function normalizeModelMapping (text: string): string {
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
function normalizeBaseUrl (text: string): string {
  const base = text.trim().replace(/\/+$/, '')
  if (base !== '' && !isUrl(base, ['http:', 'https:'])) throw fail(CM.badBaseUrl)
  return base
}

function checkType (type: number): void {
  if (CHANNEL_TYPE_NAMES[type] === undefined) throw fail(CM.unknownType, { type })
}

function checkPriority (priority: number): number {
  if (!Number.isSafeInteger(priority) || priority < PRIORITY_MIN) throw fail(CM.priorityRange)
  return priority
}

/** The channel fields an admin edits, as stored (models and groups as lists, key as plain lines). */
interface ChannelDraft {
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
function applyFields (draft: ChannelDraft, body: Fields): ChannelDraft {
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

function draftOf (row: Channel): ChannelDraft {
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

const NEW_DRAFT: ChannelDraft = {
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
function columnsOf (d: ChannelDraft): Omit<NewChannel, 'key'> {
  const { groups, models, ...rest } = d
  return { ...rest, group: groups.join(','), models: models.join(',') }
}

// ---------------------------------------------------------------------------------------------
// Reading

/**
 * Ids of channels holding `keyword` as one of their keys (keys are sealed, so they are opened
 * here). Whole keys only: a substring match would let an admin read a key out one character at
 * a time through the search, and keys are write-only.
 */
async function channelIdsByKey (app: FastifyInstance, keyword: string): Promise<number[]> {
  const ids: number[] = []
  for (let after = 0; ;) {
    const batch = await findChannelKeysAfter(app.db, after, KEY_SEARCH_BATCH)
    for (const row of batch) {
      let keys: string[]
      try {
        keys = channelKeys(row, app.secrets)
      } catch {
        continue
      }
      if (keys.includes(keyword)) ids.push(row.id)
    }
    if (batch.length < KEY_SEARCH_BATCH) return ids
    after = batch[batch.length - 1]!.id
  }
}

/** `GET /api/channel/` and `/search`. */
export async function listChannelPage (app: FastifyInstance, q: ChannelSearchQuery): Promise<ChannelPage> {
  const { page, pageSize, offset } = pageOf(q)
  const filter: ChannelFilter = {}
  const keyword = q.keyword?.trim() ?? ''
  if (keyword !== '') {
    const ids = keyword.length >= KEY_SEARCH_MIN ? await channelIdsByKey(app, keyword) : []
    if (/^\d+$/.test(keyword) && Number.isSafeInteger(Number(keyword))) ids.push(Number(keyword))
    filter.keyword = { text: keyword, ids }
  }
  if (q.group !== undefined && q.group.trim() !== '') filter.group = q.group.trim()
  if (q.model !== undefined && q.model.trim() !== '') filter.model = q.model.trim()
  const query = { filter, idSort: q.id_sort === true, offset, limit: pageSize }
  if (q.tag_mode === true) {
    const { items, total } = await listChannelsByTag(app.db, query)
    const infos = await keyInfos(app, items.flatMap((r) => r.tag === null ? [r.channel.id] : r.children.map((c) => c.id)))
    const rows = items.map((r): ChannelListItem => r.tag === null ? channelView(r.channel, infos.get(r.channel.id) ?? NO_KEY) : tagRow(r.tag, r.children, infos))
    return { items: rows, page, page_size: pageSize, total }
  }
  const { items, total } = await listChannels(app.db, query)
  const infos = await keyInfos(app, items.map((c) => c.id))
  return { items: items.map((c) => channelView(c, infos.get(c.id) ?? NO_KEY)), page, page_size: pageSize, total }
}

async function channelOrFail (app: FastifyInstance, id: number): Promise<Channel> {
  const row = await findChannelById(app.db, id)
  if (row === undefined) throw fail(CM.channelNotFound)
  return row
}

/** `GET /api/channel/{id}`: the channel with its key's hint, never the key (admins only). */
export async function getChannelDetail (app: FastifyInstance, id: number): Promise<ChannelDetail> {
  const row = await channelOrFail(app, id)
  return channelView(row, keyInfo(app, row))
}

/**
 * `POST /api/channel/copy/{id}`: a new channel with the original's settings and keys (copied
 * sealed, never shown), enabled, with fresh counters, test results and key states.
 */
export async function copyChannel (app: FastifyInstance, id: number, suffix = ' copy'): Promise<ChannelView> {
  const row = await channelOrFail(app, id)
  const key = keyInfo(app, row)
  if (key.count === 0) throw fail(CM.sealedKey)
  const copy: NewChannel = { ...columnsOf(draftOf(row)), name: `${row.name}${suffix}`, key: row.key, other_info: {} }
  const [created] = await insertChannels(app.db, [copy])
  await app.publishChange({ kind: 'channel', id: created!.id })
  return channelView(created!, key)
}

/** `GET /api/channel/models`: every model a channel type offers by default or a channel lists. */
export async function knownModels (app: FastifyInstance): Promise<Array<{ id: string }>> {
  const names = new Set(await findAllChannelModels(app.db))
  for (const models of Object.values(defaultModelsByType())) for (const m of models) names.add(m)
  return [...names].sort().map((id) => ({ id }))
}

// ---------------------------------------------------------------------------------------------
// Writing

/** `POST /api/channel/`: one channel, one multi-key channel, or (batch) one channel per key line. */
export async function createChannels (app: FastifyInstance, body: ChannelCreateBody): Promise<ChannelView[]> {
  const draft = applyFields(NEW_DRAFT, body)
  await checkTargets(app, draft)
  const keys = keyLines(body.key ?? '')
  if (keys.length === 0) throw fail(CM.keyRequired)
  const batch = body.mode === 'batch' || body.batch === true
  if (batch && keys.length > BATCH_MAX) throw fail(CM.tooManyKeys, { max: BATCH_MAX })
  const columns = columnsOf(draft)
  const rows: NewChannel[] = (batch ? keys.map((k) => [k]) : [keys]).map((ks) => ({ ...columns, key: app.secrets.seal(ks.join('\n')), other_info: {} }))
  const created = await insertChannels(app.db, rows)
  await app.publishChange(created.length === 1 ? { kind: 'channel', id: created[0]!.id } : { kind: 'channel' })
  return created.map((c, i) => channelView(c, { count: batch ? 1 : keys.length, hint: keyHint(batch ? keys[i]! : keys[0]!) }))
}

const INLINE_FIELDS = new Set(['id', 'status', 'priority', 'weight'])

/** Whether an edit changes where the channel's key goes: its type, base URL or proxy. */
function sendsKeyElsewhere (row: Channel, draft: ChannelDraft): boolean {
  let stored = row.base_url
  try {
    stored = normalizeBaseUrl(row.base_url)
  } catch {
    // A stored address the form would refuse: compared as it is.
  }
  return draft.type !== row.type || draft.base_url !== stored || draft.proxy_url.trim() !== row.proxy_url.trim()
}

function statusChange (status: number, actor: string): { status: number, reason: string } {
  if (status !== CHANNEL_STATUS.enabled && status !== CHANNEL_STATUS.disabled) throw fail(CM.statusOneOrTwo)
  return { status, reason: `${status === CHANNEL_STATUS.enabled ? 'enabled' : 'disabled'} by admin ${actor}` }
}

/**
 * `PUT /api/channel/`. A body of only id with status, priority and/or weight is the list's inline
 * edit; anything else is the edit form, where absent fields stay and a blank key keeps the
 * stored one. Abilities follow in the same transaction.
 */
export async function updateChannelFields (app: FastifyInstance, actor: string, body: ChannelUpdateBody): Promise<ChannelView> {
  const sent = Object.keys(body).filter((k) => (body as Record<string, unknown>)[k] !== undefined)
  const patch: ChannelUpdate = {}
  let reason: string | undefined
  let newKeys: string[] | undefined
  if (sent.every((k) => INLINE_FIELDS.has(k))) {
    if (sent.length === 1) throw fail(CM.nothingToChange)
    if (body.status !== undefined) ({ status: patch.status, reason } = statusChange(body.status, actor))
    if (body.priority !== undefined) patch.priority = checkPriority(body.priority)
    if (body.weight !== undefined) patch.weight = Math.max(0, body.weight)
  } else {
    const row = await channelOrFail(app, body.id)
    const draft = applyFields(draftOf(row), body)
    await checkTargets(app, draft)
    const columns: Record<string, unknown> = columnsOf(draft)
    // Only the columns the form sent are written (other follows the type's default), so a
    // concurrent change of another field survives.
    const written = new Set(sent.map((k) => k === 'groups' ? 'group' : k))
    if (written.has('type')) written.add('other')
    for (const [column, value] of Object.entries(columns)) if (written.has(column)) (patch as Record<string, unknown>)[column] = value
    const key = keyLines(body.key ?? '')
    // Keys are write-only, but the type, base URL and proxy decide where the key is sent: an
    // admin pointing a channel at a server of their own must bring the key, not reuse it.
    if (key.length === 0 && sendsKeyElsewhere(row, draft)) throw fail(CM.keyForNewTarget)
    if (key.length > 0) {
      patch.key = app.secrets.seal(key.join('\n'))
      newKeys = key
    }
    if (body.status !== undefined && body.status !== row.status) ({ status: patch.status, reason } = statusChange(body.status, actor))
    if (Object.keys(patch).length === 0) return channelView(row, keyInfo(app, row))
  }
  const updated = await updateChannel(app.db, body.id, patch, reason)
  if (updated === undefined) throw fail(CM.channelNotFound)
  if (newKeys !== undefined) {
    // The states of keys no longer in the list go with them.
    updated.key_states = await pruneChannelKeyStates(app.db, body.id, newKeys.map(keyFingerprint)) ?? updated.key_states
  }
  await app.publishChange({ kind: 'channel', id: body.id })
  return newKeys !== undefined ? channelView(updated, { count: newKeys.length, hint: keyHint(newKeys[0]!) }) : await viewOf(app, updated)
}

/** `DELETE /api/channel/{id}/`. */
export async function removeChannel (app: FastifyInstance, id: number): Promise<void> {
  if (!await deleteChannel(app.db, id)) throw fail(CM.channelNotFound)
  await app.publishChange({ kind: 'channel', id })
}

/** `DELETE /api/channel/disabled`: how many disabled and auto-disabled channels were deleted. */
export async function removeDisabledChannels (app: FastifyInstance): Promise<number> {
  const n = await deleteDisabledChannels(app.db)
  if (n > 0) await app.publishChange({ kind: 'channel' })
  return n
}

/** `POST /api/channel/fix`: rebuilds every channel's abilities; returns the channel count. */
export async function fixAbilities (app: FastifyInstance): Promise<number> {
  const n = await rebuildAllAbilities(app.db)
  await app.publishChange({ kind: 'channel' })
  return n
}

const blank = (v: string | readonly string[] | null | undefined): boolean =>
  v === undefined || v === null || (typeof v === 'string' ? v.trim() === '' : nameList(v).length === 0)

/** `PUT /api/channel/tag`: overwrites the given fields on every channel of the tag; returns how many. */
export async function editTag (app: FastifyInstance, body: ChannelTagBody): Promise<number> {
  const patch: ChannelUpdate = {}
  const tag = body.tag.trim()
  if (body.new_tag !== undefined && body.new_tag !== null && body.new_tag.trim() !== tag) patch.tag = body.new_tag.trim() || null
  if (!blank(body.model_mapping)) patch.model_mapping = normalizeModelMapping(body.model_mapping!)
  if (!blank(body.groups)) patch.group = nameList(body.groups!).join(',')
  if (!blank(body.models)) patch.models = nameList(body.models!).join(',')
  if (body.priority !== undefined && body.priority !== null) patch.priority = checkPriority(body.priority)
  if (body.weight !== undefined && body.weight !== null) {
    if (body.weight < 0) throw fail(CM.weightNegative)
    patch.weight = body.weight
  }
  if (Object.keys(patch).length === 0) throw fail(CM.nothingToChange)
  const ids = await updateChannelsByTag(app.db, tag, patch)
  if (ids.length === 0) throw fail(CM.tagNotFound, { tag })
  await app.publishChange({ kind: 'channel' })
  return ids.length
}

/** `POST /api/channel/tag/enabled` and `/tag/disabled`: every channel of the tag; returns how many. */
export async function setTagStatus (app: FastifyInstance, actor: string, tag: string, status: typeof CHANNEL_STATUS.enabled | typeof CHANNEL_STATUS.disabled): Promise<number> {
  const change = statusChange(status, actor)
  const ids = await updateChannelsByTag(app.db, tag.trim(), { status: change.status }, change.reason)
  if (ids.length === 0) throw fail(CM.tagNotFound, { tag })
  await app.publishChange({ kind: 'channel' })
  return ids.length
}

// ---------------------------------------------------------------------------------------------
// Upstream calls: tests and model lists

/** A message and its placeholders. */
export interface MsgPart { msg: Msg, vars: Record<string, string | number> }

/** A single test's answer: its message in parts (joined by a space), `time` in seconds. */
export interface TestAnswer { success: boolean, parts: MsgPart[], time: number }

const UNTESTABLE: Record<'no_adaptor' | 'no_model' | 'sealed_key', Msg> = {
  no_adaptor: CM.noAdaptor,
  no_model: CM.noTestModel,
  sealed_key: CM.sealedKey
}

const credentialStores = new WeakMap<FastifyInstance, CredentialStore>()

/**
 * Where tests and model lists share OAuth renewals (Claude Code, Codex) with the gateways: the
 * provider takes each refresh token once, so a renewal made here must reach them (Redis, and the
 * channel row written back).
 */
function credentialStore (app: FastifyInstance): CredentialStore {
  let store = credentialStores.get(app)
  if (store === undefined) credentialStores.set(app, store = redisCredentialStore({ redis: app.redis, db: app.db, box: app.secrets, publish: app.publishChange, log: app.log }))
  return store
}

/**
 * `GET /api/channel/test/{id}`: tests the channel now (every usable key of a multi-key channel, or
 * only key `keyIndex`), applying the automatic status rules. Keys are counted from 1 in messages.
 */
export async function testChannelNow (app: FastifyInstance, id: number, model?: string, keyIndex?: number): Promise<TestAnswer> {
  const row = await findChannelById(app.db, id)
  if (row === undefined) return { success: false, parts: [{ msg: CM.channelNotFound, vars: {} }], time: 0 }
  const outcome = await testOneChannel({ db: app.db, box: app.secrets, options: await app.loadOptions(), publish: app.publishChange, credentials: credentialStore(app), outbound: app.outbound }, row, model, keyIndex)
  if (!outcome.tested) {
    const part: MsgPart = outcome.reason === 'no_key'
      ? { msg: CM.noKeyToTest, vars: { n: (keyIndex ?? 0) + 1 } }
      : outcome.reason === 'keys_disabled' ? { msg: CM.keysAllDisabled, vars: { name: row.name } } : { msg: UNTESTABLE[outcome.reason], vars: { type: row.type } }
    return { success: false, parts: [part], time: 0 }
  }
  const time = outcome.ms / 1000
  const vars = { name: row.name, model: outcome.model, seconds: (outcome.ms / 1000).toFixed(2), reason: outcome.message }
  if (outcome.keys === undefined) {
    const msg = outcome.ok
      ? outcome.changedTo === 1 ? CM.testPassedEnabled : CM.testPassed
      : outcome.changedTo === 3 ? CM.testFailedDisabled : CM.testFailed
    return { success: outcome.ok, parts: [{ msg, vars }], time }
  }
  const parts: MsgPart[] = []
  if (keyIndex !== undefined) {
    const key = outcome.keys[0]!
    const n = key.index + 1
    parts.push(key.ok
      ? { msg: CM.keyPassed, vars: { ...vars, n, seconds: (key.ms / 1000).toFixed(2) } }
      : { msg: CM.keyFailed, vars: { ...vars, n, reason: key.message } })
  } else {
    parts.push({ msg: CM.keysTested, vars: { ...vars, passed: outcome.keys.filter((k) => k.ok).length, total: outcome.keys.length } })
    for (const key of outcome.keys) if (!key.ok) parts.push({ msg: CM.keyFailedNote, vars: { n: key.index + 1, reason: key.message } })
  }
  for (const key of outcome.keys) {
    if (key.changedTo === 3) parts.push({ msg: CM.keyAutoDisabledNote, vars: { n: key.index + 1 } })
    if (key.changedTo === 1) parts.push({ msg: CM.keyReEnabledNote, vars: { n: key.index + 1 } })
  }
  if (outcome.changedTo === 3) parts.push({ msg: CM.channelAutoDisabledNote, vars: {} })
  if (outcome.changedTo === 1) parts.push({ msg: CM.channelReEnabledNote, vars: {} })
  const success = keyIndex !== undefined ? outcome.keys[0]!.ok : outcome.ok
  return { success, parts, time: keyIndex !== undefined ? outcome.keys[0]!.ms / 1000 : time }
}

/** Redis key (under the service's prefix) held while a test of all channels runs on any replica. */
export const TEST_ALL_LOCK_KEY = 'channel-test:all'
const TEST_ALL_LOCK_MS = 60_000

/**
 * Tests of all channels in the background, one run at a time across replicas (a Redis lock,
 * renewed while the run lasts). `close` stops taking channels and waits for the run in hand.
 */
export class ChannelTestAll {
  readonly #app: FastifyInstance
  #running: Promise<void> | undefined
  #closing = false

  constructor (app: FastifyInstance) {
    this.#app = app
  }

  /** Starts a run unless one is going (here or on another replica); false when one is. */
  async start (): Promise<boolean> {
    const app = this.#app
    if (this.#closing) return false
    const token = await acquireLock(app.redis, TEST_ALL_LOCK_KEY, TEST_ALL_LOCK_MS)
    if (token === undefined) return false
    const renew = setInterval(() => {
      renewLock(app.redis, TEST_ALL_LOCK_KEY, token, TEST_ALL_LOCK_MS)
        .catch((err: unknown) => app.log.warn({ err }, 'channel test lock not renewed'))
    }, TEST_ALL_LOCK_MS / 3)
    this.#running = (async () => {
      try {
        // Enabled channels may need disabling and auto-disabled ones re-enabling; an admin's disable stands.
        const channels = await findChannelsByStatus(app.db, [CHANNEL_STATUS.enabled, CHANNEL_STATUS.autoDisabled])
        const deps = { db: app.db, box: app.secrets, options: await app.loadOptions(), publish: app.publishChange, credentials: credentialStore(app), outbound: app.outbound }
        const result = await testChannels(deps, channels, { stopped: () => this.#closing })
        app.log.info({ result }, 'tested all channels')
      } catch (err) {
        app.log.error({ err }, 'testing all channels failed')
      } finally {
        clearInterval(renew)
        await releaseLock(app.redis, TEST_ALL_LOCK_KEY, token).catch((err: unknown) => app.log.warn({ err }, 'channel test lock not released'))
      }
    })()
    return true
  }

  async close (): Promise<void> {
    this.#closing = true
    await this.#running
  }
}

/**
 * The outbound guard on a channel's base URL and proxy, when saved or probed: cloud metadata
 * addresses, and private ones under OUTBOUND_PUBLIC_ONLY, are refused (the relay checks again
 * whenever it connects).
 */
async function checkTargets (app: FastifyInstance, draft: { base_url: string, proxy_url: string }): Promise<void> {
  if (draft.base_url !== '') await checkOutbound(app.outbound, { url: draft.base_url })
  if (draft.proxy_url !== '') await checkOutbound(app.outbound, { url: draft.proxy_url }, { proxy: true })
}

/** '' (direct) or an http(s)/socks5(h) proxy URL: what the relay's dispatcher accepts. */
function checkProxyUrl (proxyUrl: string): void {
  if (proxyUrl !== '' && !isUrl(proxyUrl, ['http:', 'https:', 'socks5:', 'socks5h:'])) throw fail(CM.badProxyUrl)
}

function probeConfig (id: number, type: number, key: string, baseUrl: string, other: string, organization: string | null, setting: string, proxyUrl: string): ChannelConfig {
  return { id, type, key, baseUrl, other, organization, setting: parseJsonObject(setting), proxyUrl }
}

async function listUpstreamModels (type: number, config: ChannelConfig): Promise<string[]> {
  const adaptor = adaptorFor(type)
  if (adaptor === undefined) throw fail(CM.noAdaptor, { type })
  let models: string[] | undefined
  try {
    models = await fetchModels(adaptor, config, FETCH_MODELS_TIMEOUT_MS)
  } catch (err) {
    throw fail(CM.fetchModelsFailed, { reason: (err as Error).message })
  }
  if (models === undefined) throw fail(CM.fetchModelsUnsupported)
  return models
}

/** `GET /api/channel/fetch_models/{id}`: the saved channel's upstream model list. */
export async function fetchSavedChannelModels (app: FastifyInstance, id: number): Promise<string[]> {
  const row = await channelOrFail(app, id)
  let key: string
  try {
    key = channelKeys(row, app.secrets)[0] ?? ''
  } catch {
    throw fail(CM.sealedKey)
  }
  const config = probeConfig(row.id, row.type, key, row.base_url.replace(/\/+$/, ''), row.other, row.openai_organization, row.setting, row.proxy_url.trim())
  return await listUpstreamModels(row.type, { ...config, credentials: credentialStore(app), outbound: app.outbound })
}

/** `POST /api/channel/fetch_models`: the model list of settings not saved yet. */
export async function fetchUnsavedModels (app: FastifyInstance, body: FetchModelsBody): Promise<string[]> {
  checkType(body.type)
  const key = keyLines(body.key ?? '')[0]
  if (key === undefined) throw fail(CM.keyRequired)
  const base = normalizeBaseUrl(body.base_url ?? '')
  const proxyUrl = body.proxy_url?.trim() ?? ''
  checkProxyUrl(proxyUrl)
  await checkTargets(app, { base_url: base, proxy_url: proxyUrl })
  return await listUpstreamModels(body.type, { ...probeConfig(0, body.type, key, base, OTHER_DEFAULTS[body.type] ?? '', null, '', proxyUrl), outbound: app.outbound })
}
