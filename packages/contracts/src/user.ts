import Type, { type Static } from 'typebox'

/** A user as the console API shows it (never the password hash or access token). */
export const UserView = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  display_name: Type.String(),
  email: Type.String(),
  github_id: Type.String(),
  wechat_id: Type.String(),
  telegram_id: Type.String(),
  linuxdo_id: Type.String(),
  /** 1 normal user, 10 admin, 100 super admin. */
  role: Type.Integer(),
  /** 1 active, 2 banned. */
  status: Type.Integer(),
  group: Type.String(),
  quota: Type.Integer(),
  used_quota: Type.Integer(),
  request_count: Type.Integer(),
  aff_code: Type.Union([Type.String(), Type.Null()]),
  aff_count: Type.Integer(),
  aff_quota: Type.Integer(),
  aff_history_quota: Type.Integer(),
  inviter_id: Type.Integer(),
  concurrency_limit: Type.Integer(),
  setting: Type.Unknown(),
  created_at: Type.Integer(),
  deleted_at: Type.Union([Type.Integer(), Type.Null()]),
  password_is_default: Type.Boolean(),
  /** In the admin user list and view only: whether the user has two-factor sign-in enabled. */
  two_fa_enabled: Type.Optional(Type.Boolean())
})
export type UserView = Static<typeof UserView>

/** Largest per-user concurrency limit an admin may set (0 means no limit). */
export const USER_CONCURRENCY_MAX = 100_000

/** Roles (docs/domain.md). */
export const ROLES = { common: 1, admin: 10, root: 100 } as const
