import type { OptionValues } from '@modelgate/contracts'
import type { Database, Kysely } from '@modelgate/db'
import { tokenKeyHash } from './crypto.js'

/** What a relay key may still spend and has spent, and its owner's balance (Postgres, settled). */
export interface KeyUsage {
  tokenId: number
  name: string
  unlimited: boolean
  remain: number
  used: number
  /** -1 never, else unix seconds. */
  expiredTime: number
  modelLimitsEnabled: boolean
  modelLimits: string
  userQuota: number
  userUsed: number
}

/** A key's usage, found by the key itself (with or without `sk-`) or its token id; undefined for an unknown or deleted key. */
export async function keyUsage (db: Kysely<Database>, by: { key: string } | { tokenId: number }): Promise<KeyUsage | undefined> {
  const row = await db.selectFrom('tokens').innerJoin('users', 'users.id', 'tokens.user_id')
    .select([
      'tokens.id', 'tokens.name', 'tokens.unlimited_quota', 'tokens.remain_quota', 'tokens.used_quota', 'tokens.expired_time',
      'tokens.model_limits_enabled', 'tokens.model_limits', 'users.quota as user_quota', 'users.used_quota as user_used'
    ])
    .$if('key' in by, (q) => q.where('tokens.key_hash', '=', tokenKeyHash((by as { key: string }).key)))
    .$if('tokenId' in by, (q) => q.where('tokens.id', '=', (by as { tokenId: number }).tokenId))
    .where('tokens.deleted_at', 'is', null).where('users.deleted_at', 'is', null)
    .executeTakeFirst()
  if (row === undefined) return undefined
  return {
    tokenId: row.id,
    name: row.name,
    unlimited: row.unlimited_quota,
    remain: row.remain_quota,
    used: row.used_quota,
    expiredTime: row.expired_time,
    modelLimitsEnabled: row.model_limits_enabled,
    modelLimits: row.model_limits,
    userQuota: row.user_quota,
    userUsed: row.user_used
  }
}

/**
 * The figures third-party chat clients show for a key (OpenAI's old billing endpoints, as
 * one-api answers them): with DisplayTokenStatEnabled the key's own remaining and used quota,
 * else its owner's; an unlimited key shows the owner's; in dollars when DisplayInCurrencyEnabled
 * (quota / QuotaPerUnit), else in quota units.
 */
export function keyBillingFigures (u: KeyUsage, options: OptionValues): { granted: number, used: number, accessUntil: number } {
  const own = options.bool('DisplayTokenStatEnabled') && !u.unlimited
  const remain = own ? u.remain : u.userQuota
  const used = own ? u.used : u.userUsed
  const perUnit = options.num('QuotaPerUnit')
  const scale = options.bool('DisplayInCurrencyEnabled') && perUnit > 0 ? perUnit : 1
  return { granted: (remain + used) / scale, used: used / scale, accessUntil: u.expiredTime === -1 ? 0 : u.expiredTime }
}
