import { createHash } from 'node:crypto'
import { OPTION_DEFAULTS, type OptionKey, type RedemptionView, SECRET_OPTIONS } from '@modelgate/contracts'
import { type Channel, type Database, findAllOptions, findChannelsByIds, type Transaction, type User } from '@modelgate/db'
import type { SecretBox } from '@modelgate/service'
import type { FastifyRequest } from 'fastify'
import { type AuditEntry, recordAudits } from './audit.js'
import type { Deps } from './deps.js'

// What the audit trail records of each target: the fields an admin sets, in their stored form.
// Credentials go in under names the audit recognises (key, password), so they are written as
// "[changed]" and never as values.

/** A proxy address without its password, which is recorded apart as a credential. */
function splitProxy (url: string): { proxy_url: string, proxy_password?: string } {
  const m = /^([a-z][\w+.-]*:\/\/[^/@:]*):([^/@]*)@/i.exec(url)
  if (m === null) return { proxy_url: url }
  return { proxy_url: `${m[1]!}@${url.slice(m[0].length)}`, proxy_password: m[2]! }
}

/** A digest of the channel's opened keys: equal when the keys are, whatever the sealing. */
function keyDigest (row: Pick<Channel, 'key'>, box: SecretBox): string {
  let plain: string
  try {
    plain = box.open(row.key)
  } catch {
    plain = row.key
  }
  return createHash('sha256').update(plain).digest('hex')
}

/** Header overrides often carry an upstream credential (Authorization): written as a secret. */
export const CHANNEL_SECRET_FIELDS = ['header_override'] as const
/** Named like a credential, but an HTTP status mapping. */
export const CHANNEL_PLAIN_FIELDS = ['status_code_mapping'] as const

/** A channel as the audit trail compares it. */
export function channelAudit (row: Channel, box: SecretBox): Record<string, unknown> {
  return {
    name: row.name,
    type: row.type,
    status: row.status,
    key: keyDigest(row, box),
    base_url: row.base_url,
    models: row.models,
    group: row.group,
    tag: row.tag,
    priority: row.priority,
    weight: row.weight,
    model_mapping: row.model_mapping,
    status_code_mapping: row.status_code_mapping,
    auto_ban: row.auto_ban,
    test_model: row.test_model,
    ...splitProxy(row.proxy_url),
    other: row.other,
    setting: row.setting,
    openai_organization: row.openai_organization,
    max_input_tokens: row.max_input_tokens,
    param_override: row.param_override,
    header_override: row.header_override,
    multi_key_mode: row.multi_key_mode
  }
}

/** "key changed" when the channel's keys differ between the two snapshots. */
export function channelNote (before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): string | undefined {
  return before !== undefined && after !== undefined && before.key !== after.key ? 'key changed' : undefined
}

/** A user as the audit trail compares it (the password as its hash, written as "[changed]"). */
export function userAudit (user: User): Record<string, unknown> {
  return {
    username: user.username,
    display_name: user.display_name,
    email: user.email,
    role: user.role,
    status: user.status,
    group: user.group,
    quota: user.quota,
    concurrency_limit: user.concurrency_limit,
    password: user.password_hash,
    deleted: user.deleted_at !== null
  }
}

/** A redemption code as the audit trail compares it; the code itself is left out (it is a bearer secret). */
export function redemptionAudit (row: Pick<RedemptionView, 'name' | 'quota' | 'status'>): Record<string, unknown> {
  return { name: row.name, quota: row.quota, status: row.status }
}

/** Channel snapshots by id, from rows read before a change. */
export function channelSnapshots ({ secrets }: Deps<'secrets'>, rows: readonly Channel[]): Map<number, Record<string, unknown>> {
  return new Map(rows.map((row) => [row.id, channelAudit(row, secrets)]))
}

/**
 * One entry per channel of `ids` that a change created, changed or deleted: `before` holds the
 * snapshots read before it (none on create), the rows read now are the after (none once
 * deleted). A channel the change left as it was gets no entry.
 */
export async function auditChannels (deps: Deps<'db' | 'secrets'>, req: FastifyRequest, action: string, ids: readonly number[], before: ReadonlyMap<number, Record<string, unknown>> = new Map(), note?: string): Promise<void> {
  const after = channelSnapshots(deps, await findChannelsByIds(deps.db, ids))
  const entries: AuditEntry[] = []
  for (const id of ids) {
    const b = before.get(id)
    const a = after.get(id)
    if (b === undefined && a === undefined) continue
    const entry: AuditEntry = { action, targetType: 'channel', targetId: id, before: b, after: a, secretFields: CHANNEL_SECRET_FIELDS, plainFields: CHANNEL_PLAIN_FIELDS }
    const notes = [note, channelNote(b, a)].filter((n) => n !== undefined && n !== '')
    if (notes.length > 0) entry.note = notes.join('; ')
    entries.push(entry)
  }
  await recordAudits(deps, req, entries)
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function parseObject (text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return isObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * An option's before and after as recorded: JSON objects (the price tables: ModelRatio,
 * GroupRatio, ...) reduced to the names whose values changed, so one price edit records that
 * price and not the whole table; anything else as the text it is.
 */
function optionSides (before: string, after: string): [unknown, unknown] {
  const b = parseObject(before)
  const a = parseObject(after)
  if (b === undefined || a === undefined) return [before, after]
  const outB: Record<string, unknown> = {}
  const outA: Record<string, unknown> = {}
  for (const name of new Set([...Object.keys(b), ...Object.keys(a)])) {
    if (JSON.stringify(b[name]) === JSON.stringify(a[name])) continue
    if (Object.hasOwn(b, name)) outB[name] = b[name]
    if (Object.hasOwn(a, name)) outA[name] = a[name]
  }
  return [outB, outA]
}

/**
 * Reads the options `values` are about to replace and returns what records the change: pass it
 * to `saveOptions` so the entries commit with the values. One `option.update` entry per option
 * that changes; credentials (SECRET_OPTIONS) are written as "[changed]", other options as they
 * are, whatever their names (`DisplayTokenStatEnabled` is no token).
 */
export async function optionAuditor (deps: Deps<'db'>, req: FastifyRequest, values: Partial<Record<OptionKey, string>>, note?: string): Promise<(trx: Transaction<Database>) => Promise<void>> {
  const stored = await findAllOptions(deps.db)
  const entries: AuditEntry[] = []
  for (const [key, value] of Object.entries(values) as Array<[OptionKey, string]>) {
    const old = stored.get(key) ?? OPTION_DEFAULTS[key]
    const secret = SECRET_OPTIONS.has(key)
    const [before, after] = secret ? [old, value] : optionSides(old, value)
    entries.push({
      action: 'option.update',
      targetType: 'option',
      targetId: key,
      before: { [key]: before },
      after: { [key]: after },
      ...(secret ? { secretFields: [key] } : { plainFields: [key] }),
      ...(note === undefined ? {} : { note })
    })
  }
  return async (trx) => { await recordAudits(deps, req, entries, trx) }
}
