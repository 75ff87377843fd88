import { type BillingPreference, type QuotaType, type Role, tokenCacheKey, type TokenStatus, type UserStatus } from '@modelgate/contracts'
import { type Database, type Kysely, sql } from '@modelgate/db'
import { tokenKeyHash } from '@modelgate/service'
import type { Redis } from 'ioredis'

/** A relay token and its owner, as cached. */
export interface CallerRecord {
  token: {
    id: number
    name: string
    status: TokenStatus
    remainQuota: number
    unlimited: boolean
    /** -1 never, else unix seconds. */
    expiredTime: number
    /** null when model limits are off. */
    modelLimits: string[] | null
    allowIps: string[]
    group: string
    /** Requests per minute, tokens per minute and requests in flight; 0 means no limit. */
    rpmLimit: number
    tpmLimit: number
    concurrencyLimit: number
  }
  user: {
    id: number
    username: string
    status: UserStatus
    role: Role
    group: string
    deleted: boolean
    /** Requests in flight at once across all gateways; 0 means no limit. */
    concurrencyLimit: number
    /** Which pays first: an entitlement or the wallet (absent on records cached before plans existed: the default). */
    billingPreference?: BillingPreference
    /** The entitlement items of the user's active subscriptions, soonest ending first. */
    entitlements?: Entitlement[]
  }
}

/** One entitlement item of an active subscription, as the relay needs it. */
export interface Entitlement {
  itemId: number
  subscriptionId: number
  planTitle: string
  model: string
  /** 0: counted in quota units; 1: in requests. */
  quotaType: QuotaType
  /** When the subscription ends, unix seconds. */
  endsAt: number
}


const LOCAL_TTL_MS = 60_000
/** Keys held in process memory; past this the oldest go, so a flood of made-up keys stays bounded. */
const LOCAL_MAX = 10_000
const REDIS_TTL_S = 600

/**
 * Token lookups: process memory by key (60 s; a busy key is not even hashed again), then Redis
 * (10 min) and Postgres by the key's hash. A console change to a token or a user drops the
 * entries at once through the change channel; the TTLs bound staleness if a message is lost.
 */
export class CallerCache {
  readonly #local = new Map<string, { record: CallerRecord | null, at: number }>()
  readonly #db: Kysely<Database>
  readonly #redis: Redis
  readonly #localMax: number

  constructor (db: Kysely<Database>, redis: Redis, opts: { localMax?: number } = {}) {
    this.#db = db
    this.#redis = redis
    this.#localMax = opts.localMax ?? LOCAL_MAX
  }

  async find (key: string): Promise<CallerRecord | null> {
    const local = this.#local.get(key)
    if (local !== undefined && Date.now() - local.at < LOCAL_TTL_MS) return local.record
    const hash = tokenKeyHash(key)
    let record: CallerRecord | null
    // The Redis layer only saves Postgres reads: when Redis is down, authentication still works
    // (admission then fails closed at the reservation, which cannot do without Redis).
    const cached = await this.#redis.get(tokenCacheKey(hash)).catch(() => null)
    if (cached !== null) {
      record = JSON.parse(cached) as CallerRecord | null
    } else {
      record = await this.#load(hash)
      await this.#redis.set(tokenCacheKey(hash), JSON.stringify(record), 'EX', record === null ? 30 : REDIS_TTL_S).catch(() => {})
    }
    this.#local.delete(key)
    if (this.#local.size >= this.#localMax) this.#local.delete(this.#local.keys().next().value!)
    this.#local.set(key, { record, at: Date.now() })
    return record
  }

  async #load (hash: string): Promise<CallerRecord | null> {
    const row = await this.#db.selectFrom('tokens').innerJoin('users', 'users.id', 'tokens.user_id')
      .select([
        'tokens.id as token_id', 'tokens.name', 'tokens.status as token_status', 'tokens.remain_quota', 'tokens.unlimited_quota',
        'tokens.expired_time', 'tokens.model_limits_enabled', 'tokens.model_limits', 'tokens.allow_ips', 'tokens.group as token_group',
        'tokens.rpm_limit', 'tokens.tpm_limit', 'tokens.concurrency_limit as token_concurrency', 'users.concurrency_limit as user_concurrency',
        'users.id as user_id', 'users.username', 'users.status as user_status', 'users.role', 'users.group as user_group',
        'users.billing_preference', sql<boolean>`users.deleted_at is not null`.as('user_deleted')
      ])
      .where('tokens.key_hash', '=', hash).where('tokens.deleted_at', 'is', null)
      .executeTakeFirst()
    if (row === undefined) return null
    const entitlements = await this.#db.selectFrom('user_subscription_items as i')
      .innerJoin('user_subscriptions as s', 's.id', 'i.user_subscription_id')
      .select(['i.id', 'i.user_subscription_id', 's.plan_title', 'i.model_name', 'i.quota_type', 's.end_time'])
      .where('s.user_id', '=', row.user_id).where('s.status', '=', 'active').where('s.end_time', '>', Math.floor(Date.now() / 1000))
      .orderBy('s.end_time').orderBy('i.id')
      .execute()
    return {
      token: {
        id: row.token_id,
        name: row.name,
        status: row.token_status,
        remainQuota: row.remain_quota,
        unlimited: row.unlimited_quota,
        expiredTime: row.expired_time,
        modelLimits: row.model_limits_enabled ? row.model_limits.split(',').map((m) => m.trim()).filter((m) => m !== '') : null,
        allowIps: row.allow_ips.split(/[\n,]/).map((ip) => ip.trim()).filter((ip) => ip !== ''),
        group: row.token_group,
        rpmLimit: row.rpm_limit,
        tpmLimit: row.tpm_limit,
        concurrencyLimit: row.token_concurrency
      },
      user: {
        id: row.user_id,
        username: row.username,
        status: row.user_status,
        role: row.role,
        group: row.user_group,
        deleted: row.user_deleted,
        concurrencyLimit: row.user_concurrency,
        billingPreference: row.billing_preference,
        entitlements: entitlements.map((e) => ({
          itemId: e.id, subscriptionId: e.user_subscription_id, planTitle: e.plan_title, model: e.model_name, quotaType: e.quota_type, endsAt: e.end_time
        }))
      }
    }
  }

  /** Drops every entry of a token or a user (after a console change). */
  forget (match: { tokenId?: number, userId?: number }): void {
    for (const [key, entry] of this.#local) {
      if (entry.record === null) continue
      if (entry.record.token.id === match.tokenId || entry.record.user.id === match.userId) this.#local.delete(key)
    }
  }

  /** Drops everything held in this process. */
  clear (): void {
    this.#local.clear()
  }
}
