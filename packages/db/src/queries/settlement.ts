import { type Kysely, sql } from 'kysely'
import type { Database } from '../schema/index.js'
import { LOG_TYPE } from './logs.js'

/** What settlement needs of a usage event (a subset of the contracts' UsageEvent). */
export interface SettlementInput {
  request_id: string
  created_at: number
  user_id: number
  username: string
  token_id: number
  token_name: string
  unlimited_token: boolean
  channel_id: number
  model_name: string
  upstream_model: string
  group: string
  is_stream: boolean
  ip: string
  use_time_ms: number
  first_response_ms: number
  prompt_tokens: number
  completion_tokens: number
  cached_tokens: number
  quota: number
  outcome: 'success' | 'failed' | 'aborted'
  usage_source: string
  price: Record<string, number>
  retried_channels: number[]
  error?: { status: number, message: string }
}

/**
 * Settles one usage event in one transaction: the idempotency record first (a redelivered event
 * stops there and changes nothing), then the user's, token's and channel's counters, the hourly
 * dashboard bucket and, when `writeLog`, the log row. Returns the user's new balance, or
 * undefined when the event was already settled.
 */
export async function settleUsage (db: Kysely<Database>, e: SettlementInput, opts: { writeLog: boolean }): Promise<SettledUser | undefined> {
  return await db.transaction().execute(async (trx) => {
    const fresh = await trx.insertInto('settlements').values({ request_id: e.request_id, user_id: e.user_id, quota: e.quota })
      .onConflict((oc) => oc.column('request_id').doNothing()).returning('request_id').executeTakeFirst()
    if (fresh === undefined) return undefined
    const served = e.outcome !== 'failed'
    const now = Math.floor(Date.now() / 1000)
    // Rows are always touched in the same order (user, token, channel, bucket) so that concurrent
    // settlements cannot deadlock.
    const user = await trx.updateTable('users')
      .set((eb) => ({
        quota: eb('quota', '-', e.quota),
        used_quota: eb('used_quota', '+', e.quota),
        request_count: eb('request_count', '+', served ? 1 : 0)
      }))
      .where('id', '=', e.user_id).returning(['quota', 'email', 'username']).executeTakeFirst()
    if (e.token_id > 0) {
      await trx.updateTable('tokens')
        .set((eb) => ({
          remain_quota: e.unlimited_token ? eb.ref('remain_quota') : eb('remain_quota', '-', e.quota),
          used_quota: eb('used_quota', '+', e.quota),
          accessed_time: now
        }))
        .where('id', '=', e.token_id).execute()
    }
    if (e.channel_id > 0 && e.quota !== 0) {
      await trx.updateTable('channels').set((eb) => ({ used_quota: eb('used_quota', '+', e.quota) })).where('id', '=', e.channel_id).execute()
    }
    if (served) {
      const hour = e.created_at - (e.created_at % 3600)
      await trx.insertInto('quota_data')
        .values({ user_id: e.user_id, username: e.username, model_name: e.model_name, created_at: hour, token_used: e.prompt_tokens + e.completion_tokens, count: 1, quota: e.quota })
        .onConflict((oc) => oc.columns(['user_id', 'model_name', 'created_at']).doUpdateSet({
          token_used: sql`quota_data.token_used + excluded.token_used`,
          count: sql`quota_data.count + 1`,
          quota: sql`quota_data.quota + excluded.quota`
        }))
        .execute()
    }
    if (opts.writeLog) {
      await trx.insertInto('logs').values({
        created_at: e.created_at,
        type: served ? LOG_TYPE.consume : LOG_TYPE.error,
        user_id: e.user_id,
        username: e.username,
        token_id: e.token_id,
        token_name: e.token_name,
        model_name: e.model_name,
        channel_id: e.channel_id,
        group: e.group,
        quota: e.quota,
        prompt_tokens: e.prompt_tokens,
        completion_tokens: e.completion_tokens,
        use_time: Math.round(e.use_time_ms / 1000),
        is_stream: e.is_stream,
        ip: e.ip,
        request_id: e.request_id,
        content: e.outcome === 'failed' ? (e.error?.message ?? 'request failed') : e.outcome === 'aborted' ? 'client disconnected or upstream stream ended early; billed what was streamed' : '',
        other: JSON.stringify({
          ...e.price,
          frt: e.first_response_ms,
          cached_tokens: e.cached_tokens,
          upstream_model: e.upstream_model,
          usage_source: e.usage_source,
          outcome: e.outcome,
          admin_info: { use_channel: [...e.retried_channels, ...(e.channel_id > 0 ? [e.channel_id] : [])] }
        })
      }).onConflict((oc) => oc.columns(['request_id', 'created_at']).where('request_id', 'is not', null).doNothing()).execute()
    }
    return { quota: user?.quota ?? 0, email: user?.email ?? '', username: user?.username ?? e.username }
  })
}

/** The payer after settlement, for the low-balance reminder. */
export interface SettledUser { quota: number, email: string, username: string }

/** Removes idempotency records older than `olderThan` (unix seconds); returns how many. */
export async function pruneSettlements (db: Kysely<Database>, olderThan: number): Promise<number> {
  const res = await db.deleteFrom('settlements').where('settled_at', '<', olderThan).executeTakeFirst()
  return Number(res.numDeletedRows)
}
