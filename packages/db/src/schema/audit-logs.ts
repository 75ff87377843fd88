import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'

/** What one audited field was and became; absent sides were not there (created or deleted). */
export interface AuditChange {
  before?: unknown
  after?: unknown
}

/**
 * The audit trail: one row per admin or root action that changed something. Append-only (a
 * trigger refuses updates and deletes; retention drops whole months); partitioned by month on
 * created_at like logs.
 */
export interface AuditLogsTable {
  id: Generated<number>
  /** Unix seconds; also the partition key. */
  created_at: number
  /** The user who acted (0 for the system). */
  actor_id: number
  /** Their username at the time. */
  actor_name: string
  /** Their role at the time (10 admin, 100 root). */
  actor_role: number
  /** The client address (`req.ip`). */
  ip: Generated<string>
  /** Dotted lowercase verb, such as `channel.update` or `option.update`. */
  action: string
  /** What was acted on: `channel`, `user`, `token`, `redemption`, `option`, ... */
  target_type: string
  /** Its id (or name, for options); '' when the action has no single target. */
  target_id: Generated<string>
  /** The fields that changed, by name; secret values replaced by `[changed]` or `[unchanged]`. */
  changes: ColumnType<Record<string, AuditChange>, Record<string, AuditChange> | string | undefined, never>
  note: Generated<string>
}
export type AuditLog = Selectable<AuditLogsTable>
export type NewAuditLog = Insertable<AuditLogsTable>
