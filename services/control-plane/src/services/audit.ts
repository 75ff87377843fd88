import { type AuditFilterQuery, type AuditLogView, csvField } from '@modelgate/contracts'
import { type AuditChange, type AuditLog, type AuditLogFilter, type Database, insertAuditLogs, type Kysely, type Transaction } from '@modelgate/db'
import type { FastifyRequest } from 'fastify'
import type { Deps } from './deps.js'

/**
 * One admin or root action for the audit trail. `before` and `after` are the target's fields as
 * they were and became (leave `before` out on create, `after` on delete); only fields whose
 * values differ are written, with credentials replaced (see {@link auditChanges}). Action names are dotted and lowercase: `channel.update`,
 * `user.update`, `option.update`, `redemption.create`, `2fa.reset`, `channel.key.reveal`, ...
 */
export interface AuditEntry {
  action: string
  targetType: string
  targetId?: string | number | null
  before?: Record<string, unknown>
  after?: Record<string, unknown>
  note?: string
  /**
   * Top-level fields that are credentials whatever their names say (option names such as
   * `SMTPToken` come from a list, not a pattern). Fields named like a credential are hidden too.
   */
  secretFields?: readonly string[]
  /**
   * Top-level fields known to hold no credential though their names may look like one
   * (`DisplayTokenStatEnabled`): written as they are. `secretFields` wins over this.
   */
  plainFields?: readonly string[]
}

/** Field names whose values (text, or lists and objects holding text) are never written: keys, passwords, secrets, tokens, codes. */
export const SECRET_FIELD = /key|secret|password|passwd|token|code/i

export const CHANGED = '[changed]'
export const UNCHANGED = '[unchanged]'

// Stable text of a JSON value: object keys sorted, so { a, b } equals { b, a }.
function canonical (value: unknown): string {
  if (value === undefined) return 'undefined'
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined'
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  const obj = value as Record<string, unknown>
  return `{${Object.keys(obj).sort().map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`).join(',')}}`
}

const same = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b)
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

// What a credential may be: text, or text inside a list or object (backup codes). Numbers,
// booleans and null carry none and stay readable (a key's status).
const mayHold = (v: unknown): boolean => v !== null && v !== undefined && typeof v !== 'number' && typeof v !== 'boolean'

/**
 * A field's before and after with credentials replaced: a value under a secret name becomes
 * `[changed]` when the two sides differ and `[unchanged]` when they are equal; objects under
 * other names are walked, so a credential inside a settings object is hidden the same way.
 */
function redactPair (before: unknown, after: unknown, secret: boolean): [unknown, unknown] {
  if (secret && (mayHold(before) || mayHold(after))) {
    const mark = same(before, after) ? UNCHANGED : CHANGED
    return [mayHold(before) ? mark : before, mayHold(after) ? mark : after]
  }
  if (isRecord(before) && isRecord(after)) {
    const outB: Record<string, unknown> = {}
    const outA: Record<string, unknown> = {}
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const [rb, ra] = redactPair(before[key], after[key], SECRET_FIELD.test(key))
      if (Object.hasOwn(before, key)) outB[key] = rb
      if (Object.hasOwn(after, key)) outA[key] = ra
    }
    return [outB, outA]
  }
  return [redactLone(before), redactLone(after)]
}

// One side alone (created, deleted, or facing a value of another shape): every secret in it is written as changed.
function redactLone (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactLone)
  if (!isRecord(value)) return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELD.test(k) && mayHold(v) ? CHANGED : redactLone(v)]))
}

/**
 * The changes of an entry as stored: the fields whose values differ between before and after,
 * each with the sides it has, credentials replaced (see {@link redactPair}).
 */
export function auditChanges (entry: Pick<AuditEntry, 'before' | 'after' | 'secretFields' | 'plainFields'>): Record<string, AuditChange> {
  const before = entry.before ?? {}
  const after = entry.after ?? {}
  const changes: Record<string, AuditChange> = {}
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const hasB = entry.before !== undefined && Object.hasOwn(before, field) && before[field] !== undefined
    const hasA = entry.after !== undefined && Object.hasOwn(after, field) && after[field] !== undefined
    if (!hasB && !hasA) continue
    if (hasB && hasA && same(before[field], after[field])) continue
    const vb = hasB ? before[field] : undefined
    const va = hasA ? after[field] : undefined
    // A credential the caller names stays hidden whatever its type; a field it calls plain is
    // written as it is; any other is hidden by its name, and so are the names inside it.
    const [b, a] = entry.secretFields?.includes(field) === true
      ? [hasB ? CHANGED : undefined, hasA ? CHANGED : undefined]
      : entry.plainFields?.includes(field) === true ? [vb, va] : redactPair(vb, va, SECRET_FIELD.test(field))
    const change: AuditChange = {}
    if (hasB) change.before = b
    if (hasA) change.after = a
    changes[field] = change
  }
  return changes
}

/**
 * Writes one audit entry for the caller of `req` (its signed-in user, its address `req.ip`).
 * Pass the caller's transaction as `db` so the entry commits or rolls back with the change. An
 * entry given both a before and an after that do not differ is not written: nothing changed.
 */
export async function recordAudit (deps: Deps<'db'>, req: FastifyRequest, entry: AuditEntry, db?: Kysely<Database> | Transaction<Database>): Promise<void> {
  await recordAudits(deps, req, [entry], db)
}

/** Writes several entries of one request in one statement (a batch of channels, say). */
export async function recordAudits (deps: Deps<'db'>, req: FastifyRequest, entries: readonly AuditEntry[], db?: Kysely<Database> | Transaction<Database>): Promise<void> {
  const actor = req.auth?.user
  const written = entries.map((entry) => ({ entry, changes: auditChanges(entry) }))
    .filter(({ entry, changes }) => entry.before === undefined || entry.after === undefined || Object.keys(changes).length > 0)
  await insertAuditLogs(db ?? deps.db, written.map(({ entry, changes }) => ({
    actor_id: actor?.id ?? 0,
    actor_name: actor?.username ?? '',
    actor_role: actor?.role ?? 0,
    ip: req.ip ?? '',
    action: entry.action,
    target_type: entry.targetType,
    target_id: entry.targetId === undefined || entry.targetId === null ? '' : String(entry.targetId),
    changes,
    note: entry.note ?? ''
  })))
}

const blank = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim())
const seconds = (v: number | '' | undefined): number | undefined => (v === '' || v === undefined || v === 0 ? undefined : v)

/** The query of `GET /api/audit/` and `/export` as a filter. */
export function auditFilterOf (q: AuditFilterQuery): AuditLogFilter {
  return {
    actor: blank(q.actor),
    action: blank(q.action),
    targetType: blank(q.target_type),
    targetId: blank(q.target_id),
    start: seconds(q.start_timestamp),
    end: seconds(q.end_timestamp)
  }
}

/** An entry as the API shows it. */
export function auditView (row: AuditLog): AuditLogView {
  return { ...row, changes: row.changes ?? {} }
}

const CSV_COLUMNS = ['id', 'time', 'actor_id', 'actor_name', 'actor_role', 'ip', 'action', 'target_type', 'target_id', 'changes', 'note'] as const

/** Entries as CSV (a header line, then one line per entry, CRLF); every cell neutralised. */
export function auditCsv (rows: readonly AuditLogView[]): string {
  const lines = [CSV_COLUMNS.join(',')]
  for (const r of rows) {
    const cells = [String(r.id), new Date(r.created_at * 1000).toISOString(), String(r.actor_id), r.actor_name, String(r.actor_role), r.ip, r.action, r.target_type, r.target_id, JSON.stringify(r.changes), r.note]
    lines.push(cells.map(csvField).join(','))
  }
  return lines.join('\r\n') + '\r\n'
}
