import { type ConfigChange, configChannel, tokenCacheKey } from '@modelgate/contracts'
import type { Database, Kysely } from '@modelgate/db'
import type { Redis } from 'ioredis'

/**
 * Announces a configuration change to every gateway and control-plane replica. Gateways cache
 * token records (with their owner, the owner's billing preference and entitlements) in Redis too:
 * those of a changed user or token are dropped before the announcement, so a gateway that forgets
 * its own copy on hearing it reloads from Postgres.
 */
export async function publishConfigChange (deps: { db: Kysely<Database>, redis: Redis, keyPrefix: string }, change: ConfigChange): Promise<void> {
  const hashes = change.kind === 'user'
    ? (await deps.db.selectFrom('tokens').select('key_hash').where('user_id', '=', change.id).execute()).map((r) => r.key_hash)
    : change.kind === 'token'
      ? (await deps.db.selectFrom('tokens').select('key_hash').where('id', '=', change.id).execute()).map((r) => r.key_hash)
      : []
  if (hashes.length > 0) await deps.redis.del(...hashes.map(tokenCacheKey))
  await deps.redis.publish(configChannel(deps.keyPrefix), JSON.stringify(change))
}
