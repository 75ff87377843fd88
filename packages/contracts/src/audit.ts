import Type, { type Static } from 'typebox'
import { ApiEnvelope } from './api.js'
import { PagingQuery } from './paging.js'

/** What one field was and became; a side is absent when the target was created or deleted. */
export const AuditChange = Type.Object({
  before: Type.Optional(Type.Unknown()),
  after: Type.Optional(Type.Unknown())
})
export type AuditChange = Static<typeof AuditChange>

/**
 * One entry of the audit trail: an admin or root action that changed something. Credentials
 * never appear: a changed secret reads `[changed]` (or `[unchanged]` beside a changed neighbour).
 */
export const AuditLogView = Type.Object({
  id: Type.Integer(),
  /** Unix seconds. */
  created_at: Type.Integer(),
  actor_id: Type.Integer(),
  /** The actor's username at the time. */
  actor_name: Type.String(),
  /** The actor's role at the time (10 admin, 100 root). */
  actor_role: Type.Integer(),
  /** The client address. */
  ip: Type.String(),
  /** Dotted and lowercase, such as `channel.update`. */
  action: Type.String(),
  target_type: Type.String(),
  /** '' when the action has no single target. */
  target_id: Type.String(),
  /** The fields that changed, by name. */
  changes: Type.Record(Type.String(), AuditChange),
  note: Type.String()
})
export type AuditLogView = Static<typeof AuditLogView>

/** One page of entries, newest first. */
export const AuditPage = Type.Object({
  items: Type.Array(AuditLogView),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer()
})
export type AuditPage = Static<typeof AuditPage>
export const AuditPageResponse = ApiEnvelope(AuditPage)

// The console sends every filter, blank ones as empty strings.
const text = Type.Optional(Type.String({ maxLength: 200 }))
const seconds = Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Literal('')]))

/** Filters of `GET /api/audit/` and `/api/audit/export`; blank or absent ones do not filter. */
export const AuditFilterQuery = Type.Object({
  /** The actor's username, or their id. */
  actor: text,
  action: text,
  target_type: text,
  target_id: text,
  /** Unix seconds, inclusive. */
  start_timestamp: seconds,
  /** Unix seconds, exclusive. */
  end_timestamp: seconds
})
export type AuditFilterQuery = Static<typeof AuditFilterQuery>

/** `GET /api/audit/`. */
export const AuditListQuery = Type.Object({
  ...PagingQuery.properties,
  ...AuditFilterQuery.properties
})
export type AuditListQuery = Static<typeof AuditListQuery>

/** Most rows one CSV export holds (newest first); narrow the filters for older ones. */
export const AUDIT_EXPORT_MAX = 10_000

/** The actions the control plane records, for the console's filter (others may appear). */
export const AUDIT_ACTIONS = [
  'channel.create', 'channel.update', 'channel.delete', 'channel.tag.update', 'channel.tag.status',
  'channel.key.status', 'channel.key.reveal',
  'user.create', 'user.update', 'user.promote', 'user.demote', 'user.enable', 'user.disable', 'user.delete', '2fa.reset',
  'redemption.create', 'redemption.update', 'redemption.delete', 'topup.complete',
  'option.update', 'log.delete',
  'oauth_provider.create', 'oauth_provider.update', 'oauth_provider.delete'
] as const
