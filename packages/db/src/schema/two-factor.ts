import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

/**
 * A user's TOTP (RFC 6238) second factor: present from setup on, `enabled` once a code confirmed
 * it. Times are unix seconds.
 */
export interface TwoFactorAuthTable {
  user_id: number
  /** The base32 secret sealed with the app's SecretBox (AES-256-GCM under CRYPTO_SECRET). */
  secret_encrypted: string
  enabled: Generated<boolean>
  /** When the user confirmed the setup; null while pending. */
  enabled_at: number | null
  /** The last accepted 30-second time-step (unix seconds / 30); a code at or before it is refused. */
  last_used_step: Generated<number>
  created_at: Generated<number>
  updated_at: Generated<number>
}
export type TwoFactorAuth = Selectable<TwoFactorAuthTable>
export type NewTwoFactorAuth = Insertable<TwoFactorAuthTable>
export type TwoFactorAuthUpdate = Updateable<TwoFactorAuthTable>

/** Single-use backup codes: only their SHA-256 is stored. */
export interface TwoFactorBackupCodesTable {
  id: Generated<number>
  user_id: number
  /** Hex SHA-256 of the normalised code, bound to the user. */
  code_hash: string
  /** When it was spent; null while usable. */
  used_at: number | null
  created_at: Generated<number>
}
export type TwoFactorBackupCode = Selectable<TwoFactorBackupCodesTable>
