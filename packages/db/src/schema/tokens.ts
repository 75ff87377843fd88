import type { TokenStatus } from '@modelgate/contracts'
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Relay access token (sk-...). Looked up by hash; the encrypted copy lets the owner reveal it. */
export interface TokensTable {
  id: Generated<number>
  user_id: number
  name: Generated<string>
  /** SHA-256 hex of the key without its `sk-` prefix (tokenKeyHash). */
  key_hash: string
  /** AES-256-GCM ciphertext of the key under CRYPTO_SECRET. */
  key_encrypted: string
  /** A masked form for lists, e.g. sk-abcd...wxyz. */
  key_hint: Generated<string>
  /** TOKEN_STATUS: enabled, disabled, expired or exhausted. */
  status: Generated<TokenStatus>
  remain_quota: Generated<number>
  used_quota: Generated<number>
  unlimited_quota: Generated<boolean>
  /** -1 never, else unix seconds. */
  expired_time: Generated<number>
  model_limits_enabled: Generated<boolean>
  /** Comma-separated model names. */
  model_limits: Generated<string>
  /** One IP or CIDR per line; empty allows all. */
  allow_ips: Generated<string>
  /** Empty means the owner's group. */
  group: Generated<string>
  /** Requests per minute across all gateways; 0 means no limit. */
  rpm_limit: Generated<number>
  /** Prompt plus completion tokens per minute; 0 means no limit. */
  tpm_limit: Generated<number>
  /** Requests in flight at once; 0 means no limit. */
  concurrency_limit: Generated<number>
  created_time: Generated<number>
  accessed_time: Generated<number>
  deleted_at: number | null
}
export type Token = Selectable<TokensTable>
export type NewToken = Insertable<TokensTable>
export type TokenUpdate = Updateable<TokensTable>
