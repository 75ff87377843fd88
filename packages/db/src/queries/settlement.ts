import { type Kysely, sql } from 'kysely'
import type { Database, NewLog } from '../schema/index.js'
import { LOG_TYPE } from '@modelgate/contracts'

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
  cache_write_tokens?: number
  audio_prompt_tokens?: number
  audio_completion_tokens?: number
  quota: number
  /** `refused`: a request never admitted (ErrorLogEnabled): only its log row is written, whatever `quota` says. */
  outcome: 'success' | 'failed' | 'aborted' | 'refused'
  usage_source: string
  price: Record<string, number>
  retried_channels: number[]
  /** `upstream`: the classified upstream failure, for admins only (admin_info.error, never the content). */
  error?: { status: number, message: string, upstream?: { status: number, code?: string, message: string } }
  /** The subscription's entitlement item that paid instead of the wallet. */
  paid_by?: { item_id: number, subscription_id: number, plan_title: string, quota_type: 0 | 1 }
}

/**
 * What an event takes from the entitlement item that paid it, in the item's unit: its quota, or
 * one request when it was served (a request that failed costs an item counted in requests nothing).
 */
export function entitlementCharge (e: Pick<SettlementInput, 'paid_by' | 'outcome' | 'quota'>): number {
  if (e.paid_by === undefined || e.outcome === 'refused') return 0
  if (e.paid_by.quota_type === 1) return e.outcome === 'failed' ? 0 : 1
  return e.quota
}

/**
 * The Redis correction of a settled event (the quota store's settleMany item): its actual cost,
 * and the entitlement item that paid with what the item owes in its unit.
 */
export function redisSettlement (e: SettlementInput): { requestId: string, userId: number, tokenId: number, actual: number, itemId?: number, itemActual?: number } {
  const base = { requestId: e.request_id, userId: e.user_id, tokenId: e.token_id, actual: e.quota }
  return e.paid_by === undefined ? base : { ...base, itemId: e.paid_by.item_id, itemActual: entitlementCharge(e) }
}

/** What an event takes from the user's wallet: nothing when an entitlement item paid. */
const walletCharge = (e: SettlementInput): number => (e.paid_by === undefined ? charged(e) : 0)

/** A refused request (never admitted): it moves no balance or counter; only its error log row is kept. */
const isRefused = (e: SettlementInput): boolean => e.outcome === 'refused'

/** What the event charges: nothing for a refused request, whatever its quota field says. */
const charged = (e: SettlementInput): number => (isRefused(e) ? 0 : e.quota)

/**
 * Settles one usage event in one transaction: the idempotency record first (a redelivered event
 * stops there and changes nothing), then the user's, token's and channel's counters, the hourly
 * dashboard bucket and, when `writeLog`, the log row. A refused event writes its idempotency
 * record and its error log row (whatever `writeLog`: the gateway sends one only while
 * ErrorLogEnabled is on) and nothing else. Returns the user's balance after settlement, or
 * undefined when the event was already settled.
 */
export async function settleUsage (db: Kysely<Database>, e: SettlementInput, opts: { writeLog: boolean }): Promise<SettledUser | undefined> {
  return await db.transaction().execute(async (trx) => {
    const fresh = await trx.insertInto('settlements').values({ request_id: e.request_id, user_id: e.user_id, quota: charged(e) })
      .onConflict((oc) => oc.column('request_id').doNothing()).returning('request_id').executeTakeFirst()
    if (fresh === undefined) return undefined
    if (isRefused(e)) {
      await trx.insertInto('logs').values(logRow(e)).onConflict((oc) => oc.columns(['request_id', 'created_at']).where('request_id', 'is not', null).doNothing()).execute()
      const user = await trx.selectFrom('users').select(['quota', 'email', 'username']).where('id', '=', e.user_id).executeTakeFirst()
      return { quota: user?.quota ?? 0, email: user?.email ?? '', username: user?.username ?? e.username }
    }
    const served = e.outcome !== 'failed'
    const now = Math.floor(Date.now() / 1000)
    // Rows are always touched in the same order (user, token, channel, bucket) so that concurrent
    // settlements cannot deadlock.
    const user = await trx.updateTable('users')
      .set((eb) => ({
        quota: eb('quota', '-', walletCharge(e)),
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
    if (e.paid_by !== undefined && entitlementCharge(e) !== 0) {
      await trx.updateTable('user_subscription_items').set((eb) => ({ amount_used: eb('amount_used', '+', entitlementCharge(e)) })).where('id', '=', e.paid_by.item_id).execute()
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
      await trx.insertInto('logs').values(logRow(e)).onConflict((oc) => oc.columns(['request_id', 'created_at']).where('request_id', 'is not', null).doNothing()).execute()
    }
    return { quota: user?.quota ?? 0, email: user?.email ?? '', username: user?.username ?? e.username }
  })
}

/** How the tokens divide into text and audio, for requests that had audio (docs/domain.md). */
function audioSplit (e: SettlementInput): Record<string, number | boolean> {
  const audioIn = e.audio_prompt_tokens ?? 0
  const audioOut = e.audio_completion_tokens ?? 0
  if (audioIn + audioOut === 0) return {}
  return { audio: true, text_input: e.prompt_tokens - audioIn, text_output: e.completion_tokens - audioOut, audio_input: audioIn, audio_output: audioOut }
}

/** What a log's content says of an event: why it failed or was refused, or how it was billed. */
function logContent (e: SettlementInput): string {
  switch (e.outcome) {
    case 'failed': return e.error?.message ?? 'request failed'
    case 'refused': return e.error?.message ?? 'request refused'
    default:
      if (e.usage_source === 'estimated') return e.error?.message ?? 'estimated'
      return e.outcome === 'aborted' ? 'client disconnected or upstream stream ended early; billed what was streamed' : ''
  }
}

/** Which paid, in the log's `other`: the wallet, or the subscription's item (and for one counted in requests, the request). */
function billingSource (e: SettlementInput): Record<string, string | number> {
  if (e.outcome === 'refused') return {}
  if (e.paid_by === undefined) return { billing_source: 'wallet' }
  return {
    billing_source: 'subscription',
    subscription_id: e.paid_by.subscription_id,
    subscription_item_id: e.paid_by.item_id,
    plan_title: e.paid_by.plan_title,
    ...(e.paid_by.quota_type === 1 ? { subscription_requests: entitlementCharge(e) } : {})
  }
}

/** The log row of one settled event (docs/domain.md, `other` with ratios and admin_info). */
function logRow (e: SettlementInput) {
  const served = e.outcome === 'success' || e.outcome === 'aborted'
  return {
    created_at: e.created_at,
    type: served ? LOG_TYPE.consume : LOG_TYPE.error,
    user_id: e.user_id,
    username: e.username,
    token_id: e.token_id,
    token_name: e.token_name,
    model_name: e.model_name,
    channel_id: e.channel_id,
    group: e.group,
    quota: charged(e),
    prompt_tokens: e.prompt_tokens,
    completion_tokens: e.completion_tokens,
    use_time: Math.round(e.use_time_ms / 1000),
    is_stream: e.is_stream,
    ip: e.ip,
    request_id: e.request_id,
    content: logContent(e),
    other: JSON.stringify({
      ...e.price,
      frt: e.first_response_ms,
      cached_tokens: e.cached_tokens,
      ...(e.cache_write_tokens !== undefined && e.cache_write_tokens > 0 ? { cache_write_tokens: e.cache_write_tokens } : {}),
      ...audioSplit(e),
      upstream_model: e.upstream_model,
      usage_source: e.usage_source,
      outcome: e.outcome,
      ...billingSource(e),
      admin_info: {
        use_channel: [...e.retried_channels, ...(e.channel_id > 0 ? [e.channel_id] : [])],
        ...(e.error?.upstream === undefined ? {} : { error: e.error.upstream })
      }
    })
  } satisfies NewLog
}

/**
 * The ids of `rows`, ascending, with those rows of `table` locked in that order when there are
 * several: the one update that follows may touch them in any order, and concurrent batches must
 * not lock the same rows in opposite orders (deadlock). One statement for any number of rows,
 * so a batch spread over 10,000 channels costs what one channel does.
 */
async function lockInIdOrder (trx: Kysely<Database>, table: 'users' | 'tokens' | 'channels' | 'user_subscription_items', rows: ReadonlyMap<number, unknown>): Promise<number[]> {
  const ids = [...rows.keys()].sort((a, b) => a - b)
  if (ids.length > 1) await sql`select id from ${sql.table(table)} where id = any(${ids}::int[]) order by id for update`.execute(trx)
  return ids
}

type LogRow = ReturnType<typeof logRow>

/** Inserts log rows as one array per column (unnest). */
async function insertLogs (trx: Kysely<Database>, rows: readonly LogRow[]): Promise<void> {
  const col = <K extends keyof LogRow>(key: K): Array<LogRow[K]> => rows.map((r) => r[key])
  await sql`
    insert into logs (created_at, type, user_id, username, token_id, token_name, model_name, channel_id, "group",
                      quota, prompt_tokens, completion_tokens, use_time, is_stream, ip, request_id, content, other)
    select * from unnest(
      ${col('created_at')}::bigint[], ${col('type')}::smallint[], ${col('user_id')}::int[], ${col('username')}::text[],
      ${col('token_id')}::int[], ${col('token_name')}::text[], ${col('model_name')}::text[], ${col('channel_id')}::int[],
      ${col('group')}::text[], ${col('quota')}::bigint[], ${col('prompt_tokens')}::int[], ${col('completion_tokens')}::int[],
      ${col('use_time')}::int[], ${col('is_stream')}::boolean[], ${col('ip')}::text[], ${col('request_id')}::text[],
      ${col('content')}::text[], ${col('other')}::jsonb[]
    )
  `.execute(trx)
}

/** The payer after settlement, for the low-balance reminder. */
export interface SettledUser { quota: number, email: string, username: string }

/** Removes idempotency records older than `olderThan` (unix seconds); returns how many. */
export async function pruneSettlements (db: Kysely<Database>, olderThan: number): Promise<number> {
  const res = await db.deleteFrom('settlements').where('settled_at', '<', olderThan).executeTakeFirst()
  return Number(res.numDeletedRows)
}

/**
 * Settles many events in one transaction, each exactly once: one multi-row insert of their
 * idempotency rows tells which are new; the new ones are summed per user, token, channel and
 * hourly bucket, so each row is updated once per batch instead of once per event, and each table
 * in one statement however many of its rows the batch touches (rows locked in id order, so
 * concurrent batches cannot deadlock). Returns, per request id, the payer after settlement, or
 * undefined for events settled before. Throws as a whole; the caller may then settle one by one.
 */
export async function settleUsageBatch (db: Kysely<Database>, events: readonly SettlementInput[], opts: { writeLog: boolean }): Promise<Map<string, SettledUser | undefined>> {
  const result = new Map<string, SettledUser | undefined>(events.map((e) => [e.request_id, undefined]))
  if (events.length === 0) return result
  const unique = [...new Map(events.map((e) => [e.request_id, e])).values()]
  await db.transaction().execute(async (trx) => {
    // Rows go in as one array per column (unnest): a few parameters instead of one per value,
    // which at hundreds of events a batch was most of the worker's query-building time.
    const { rows: inserted } = await sql<{ request_id: string }>`
      insert into settlements (request_id, user_id, quota)
      select * from unnest(${unique.map((e) => e.request_id)}::text[], ${unique.map((e) => e.user_id)}::int[], ${unique.map(charged)}::bigint[])
      on conflict (request_id) do nothing
      returning request_id
    `.execute(trx)
    const fresh = new Set(inserted.map((r) => r.request_id))
    const settledNow = unique.filter((e) => fresh.has(e.request_id))
    if (settledNow.length === 0) return
    // Refused requests change no balance or counter: only their log rows are written (below).
    const todo = settledNow.filter((e) => !isRefused(e))
    const refused = settledNow.filter(isRefused)
    const now = Math.floor(Date.now() / 1000)
    const sum = <K>(key: (e: SettlementInput) => K | undefined, value: (e: SettlementInput) => [number, number]) => {
      const m = new Map<K, [number, number]>()
      for (const e of todo) {
        const k = key(e)
        if (k === undefined) continue
        const [a, b] = value(e)
        const cur = m.get(k) ?? [0, 0]
        m.set(k, [cur[0] + a, cur[1] + b])
      }
      return m
    }
    const served = (e: SettlementInput) => e.outcome !== 'failed'
    // Per user: what the wallet pays, what was used (whatever paid), and the requests served.
    const users = new Map<number, [number, number, number]>()
    for (const e of todo) {
      const cur = users.get(e.user_id) ?? [0, 0, 0]
      users.set(e.user_id, [cur[0] + walletCharge(e), cur[1] + e.quota, cur[2] + (served(e) ? 1 : 0)])
    }
    const payers = new Map<number, SettledUser>()
    const userIds = await lockInIdOrder(trx, 'users', users)
    if (userIds.length > 0) {
      const { rows: paid } = await sql<SettledUser & { id: number }>`
        update users as u set quota = u.quota - v.w, used_quota = u.used_quota + v.q, request_count = u.request_count + v.n
        from unnest(${userIds}::int[], ${userIds.map((id) => users.get(id)![0])}::bigint[], ${userIds.map((id) => users.get(id)![1])}::bigint[],
                    ${userIds.map((id) => users.get(id)![2])}::int[]) as v(id, w, q, n)
        where u.id = v.id
        returning u.id, u.quota, u.email, u.username
      `.execute(trx)
      for (const row of paid) payers.set(row.id, { quota: Number(row.quota), email: row.email, username: row.username })
    }
    // The users of refused requests only, read (never written): their balance as it is.
    const readOnly = [...new Set(refused.map((e) => e.user_id).filter((id) => !payers.has(id)))]
    if (readOnly.length > 0) {
      const rows = await trx.selectFrom('users').select(['id', 'quota', 'email', 'username']).where('id', 'in', readOnly).execute()
      for (const row of rows) payers.set(row.id, { quota: row.quota, email: row.email, username: row.username })
    }
    const tokens = sum((e) => (e.token_id > 0 ? e.token_id : undefined), (e) => [e.quota, e.unlimited_token ? 0 : e.quota])
    const tokenIds = await lockInIdOrder(trx, 'tokens', tokens)
    if (tokenIds.length > 0) {
      await sql`
        update tokens as t set remain_quota = t.remain_quota - v.r, used_quota = t.used_quota + v.u, accessed_time = ${now}
        from unnest(${tokenIds}::int[], ${tokenIds.map((id) => tokens.get(id)![0])}::bigint[], ${tokenIds.map((id) => tokens.get(id)![1])}::bigint[]) as v(id, u, r)
        where t.id = v.id
      `.execute(trx)
    }
    const channels = sum((e) => (e.channel_id > 0 && e.quota !== 0 ? e.channel_id : undefined), (e) => [e.quota, 0])
    const channelIds = await lockInIdOrder(trx, 'channels', channels)
    if (channelIds.length > 0) {
      await sql`
        update channels as c set used_quota = c.used_quota + v.q
        from unnest(${channelIds}::int[], ${channelIds.map((id) => channels.get(id)![0])}::bigint[]) as v(id, q)
        where c.id = v.id
      `.execute(trx)
    }
    const items = sum((e) => (e.paid_by !== undefined && entitlementCharge(e) !== 0 ? e.paid_by.item_id : undefined), (e) => [entitlementCharge(e), 0])
    const itemIds = await lockInIdOrder(trx, 'user_subscription_items', items)
    if (itemIds.length > 0) {
      await sql`
        update user_subscription_items as i set amount_used = i.amount_used + v.q
        from unnest(${itemIds}::int[], ${itemIds.map((id) => items.get(id)![0])}::bigint[]) as v(id, q)
        where i.id = v.id
      `.execute(trx)
    }
    const buckets = new Map<string, { user_id: number, username: string, model_name: string, created_at: number, token_used: number, count: number, quota: number }>()
    for (const e of todo.filter(served)) {
      const hour = e.created_at - (e.created_at % 3600)
      const k = `${e.user_id}\u0000${e.model_name}\u0000${hour}`
      const b = buckets.get(k) ?? { user_id: e.user_id, username: e.username, model_name: e.model_name, created_at: hour, token_used: 0, count: 0, quota: 0 }
      b.token_used += e.prompt_tokens + e.completion_tokens
      b.count += 1
      b.quota += e.quota
      buckets.set(k, b)
    }
    if (buckets.size > 0) {
      await trx.insertInto('quota_data').values([...buckets.values()].sort((a, b) => a.user_id - b.user_id || a.created_at - b.created_at || (a.model_name < b.model_name ? -1 : 1)))
        .onConflict((oc) => oc.columns(['user_id', 'model_name', 'created_at']).doUpdateSet({
          token_used: sql`quota_data.token_used + excluded.token_used`,
          count: sql`quota_data.count + excluded.count`,
          quota: sql`quota_data.quota + excluded.quota`
        }))
        .execute()
    }
    // A refused event's row is written whatever `writeLog`: the gateway sends one only while ErrorLogEnabled is on.
    const logged = opts.writeLog ? settledNow : refused
    if (logged.length > 0) await insertLogs(trx, logged.map(logRow))
    for (const e of settledNow) result.set(e.request_id, payers.get(e.user_id) ?? (isRefused(e) ? { quota: 0, email: '', username: e.username } : undefined))
  })
  return result
}
