import type { BillingPreference, Role, UserStatus } from '@modelgate/contracts'
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Console account. Times are unix seconds; quota columns are integer quota units. */
export interface UsersTable {
  id: Generated<number>
  username: string
  display_name: Generated<string>
  /** argon2 hash; never returned by the API. */
  password_hash: Generated<string>
  email: Generated<string>
  github_id: Generated<string>
  wechat_id: Generated<string>
  telegram_id: Generated<string>
  linuxdo_id: Generated<string>
  /** SHA-256 of the user's management access token, or null when none was generated. */
  access_token_hash: string | null
  /** ROLES: common, admin or root (super admin). */
  role: Generated<Role>
  /** USER_STATUS: enabled or disabled. */
  status: Generated<UserStatus>
  group: Generated<string>
  quota: Generated<number>
  used_quota: Generated<number>
  request_count: Generated<number>
  aff_code: string | null
  aff_count: Generated<number>
  aff_quota: Generated<number>
  aff_history_quota: Generated<number>
  /** 0 means none. */
  inviter_id: Generated<number>
  /** Which pays a relay request first: an entitlement of an active subscription, or the wallet. */
  billing_preference: Generated<BillingPreference>
  /** Concurrent relay requests allowed; 0 means no individual limit. */
  concurrency_limit: Generated<number>
  setting: ColumnType<Record<string, unknown>, Record<string, unknown> | string | undefined, Record<string, unknown> | string>
  /** Bumped to end every session of the user at once. */
  session_version: Generated<number>
  /** Still the password the system created the account with (root / 123456). */
  password_is_default: Generated<boolean>
  created_at: Generated<number>
  /** Soft delete: non-null means deregistered. */
  deleted_at: number | null
}
export type User = Selectable<UsersTable>
export type NewUser = Insertable<UsersTable>
export type UserUpdate = Updateable<UsersTable>
