import { type Database, type Kysely, redisSettlement, settleUsageBatch } from '@modelgate/db'
import type { BalanceKind, OpenReservation, QuotaStore } from '@modelgate/quota'

export interface ReconcileDeps {
  db: Kysely<Database>
  quota: QuotaStore
  /**
   * The longest a relay request may run: an open reservation older than this lost its gateway
   * (killed mid-request) and is settled at its estimate. Never when absent.
   */
  orphanAfterMs?: number
  /** Now, unix ms (tests); Redis' clock stamps reservations, the same host clock here. */
  now?: () => number
  /**
   * Usage jobs not yet settled: while there are any, no reservation is taken for an orphan (its
   * event may be in the queue, e.g. after the worker was down), and the next run looks again.
   */
  usageBacklog?: () => Promise<number>
}

export interface ReconcileResult {
  checked: number
  repaired: number
  /** Skipped because a request of theirs was in flight. */
  busy: number
  /** Orphaned reservations settled at their estimate. */
  orphans: number
  /** Balances cached under the key names of earlier releases, deleted. */
  legacy: number
}

/** Why an orphan's log row exists (its `content`); the row's `other.usage_source` is 'estimated'. */
export const ORPHAN_MESSAGE = 'the gateway serving this request stopped before reporting its usage; billed at the reservation\'s estimate'

/**
 * Settles reservations whose gateway died mid-request (ARCHITECTURE.md invariant 3: every admitted
 * request yields exactly one settlement): older than `orphanAfterMs`, they are billed at the
 * amount reserved, flagged `usage_source: 'estimated'`, through the same idempotent settlement
 * as a usage event (a late event from a gateway that was only slow changes nothing).
 */
async function settleOrphans (deps: ReconcileDeps, open: readonly OpenReservation[]): Promise<number> {
  if (deps.orphanAfterMs === undefined) return 0
  const now = deps.now?.() ?? Date.now()
  const orphans = open.filter((r) => r.reservedAt !== undefined && now - r.reservedAt > deps.orphanAfterMs!)
  if (orphans.length === 0) return 0
  if (deps.usageBacklog !== undefined && await deps.usageBacklog() > 0) return 0
  const itemIds = [...new Set(orphans.map((o) => o.itemId).filter((id): id is number => id !== undefined))]
  const items = new Map(itemIds.length === 0 ? [] : (await deps.db.selectFrom('user_subscription_items as i').innerJoin('user_subscriptions as s', 's.id', 'i.user_subscription_id')
    .select(['i.id', 'i.quota_type', 'i.user_subscription_id', 's.plan_title']).where('i.id', 'in', itemIds).execute()).map((i) => [i.id, i]))
  const users = new Map((await deps.db.selectFrom('users').select(['id', 'username', 'group']).where('id', 'in', [...new Set(orphans.map((o) => o.userId))]).execute()).map((u) => [u.id, u]))
  const tokenIds = [...new Set(orphans.map((o) => o.tokenId).filter((id) => id > 0))]
  const tokens = new Map(tokenIds.length === 0 ? [] : (await deps.db.selectFrom('tokens').select(['id', 'name']).where('id', 'in', tokenIds).execute()).map((t) => [t.id, t.name]))
  const events = orphans.map((o) => {
    const item = o.itemId === undefined ? undefined : items.get(o.itemId)
    return {
      request_id: o.requestId,
      created_at: Math.floor(o.reservedAt! / 1000),
      user_id: o.userId,
      username: users.get(o.userId)?.username ?? '',
      token_id: o.tokenId,
      token_name: tokens.get(o.tokenId) ?? '',
      unlimited_token: o.unlimited,
      channel_id: 0,
      model_name: '',
      upstream_model: '',
      group: users.get(o.userId)?.group ?? '',
      is_stream: false,
      ip: '',
      use_time_ms: now - o.reservedAt!,
      first_response_ms: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      cached_tokens: 0,
      reserved: o.amount,
      quota: o.amount,
      outcome: 'aborted' as const,
      usage_source: 'estimated',
      price: {},
      retried_channels: [],
      error: { status: 0, message: ORPHAN_MESSAGE },
      ...(item === undefined ? {} : { paid_by: { item_id: item.id, subscription_id: item.user_subscription_id, plan_title: item.plan_title, quota_type: item.quota_type } })
    }
  })
  await settleUsageBatch(deps.db, events, { writeLog: true })
  await deps.quota.settleMany(events.map(redisSettlement))
  return orphans.length
}

/**
 * A cached balance should equal the Postgres balance minus its open reservations. Orphaned
 * reservations are settled first (see settleOrphans). Then only accounts
 * with no open reservation, before and after reading Postgres, are repaired, and only with a
 * compare-and-set: a request admitted meanwhile, or a settlement between its Postgres commit and
 * its Redis correction, makes the account busy or changes the value, and it is left for the next
 * run. Cached balances of deleted users or tokens are dropped.
 */
export async function run (deps: ReconcileDeps): Promise<ReconcileResult> {
  const result: ReconcileResult = { checked: 0, repaired: 0, busy: 0, orphans: 0, legacy: await deps.quota.dropLegacyBalances() }
  result.orphans = await settleOrphans(deps, await deps.quota.openReservations())
  // The account a reservation holds of each kind (an item's, only when one pays).
  const holder = (kind: BalanceKind, r: OpenReservation): number | undefined =>
    kind === 'user' ? r.userId : kind === 'token' ? (r.unlimited ? undefined : r.tokenId) : r.itemId
  for (const kind of ['user', 'token', 'entitlement'] as const) {
    const before = await deps.quota.openReservations()
    const busy = new Set(before.map((r) => holder(kind, r)).filter((id) => id !== undefined))
    const cached = await deps.quota.cachedBalances(kind)
    const ids = cached.map((c) => c.id)
    const truth = new Map<number, number>()
    for (let i = 0; i < ids.length; i += 1000) {
      const chunk = ids.slice(i, i + 1000)
      const rows = kind === 'user'
        ? await deps.db.selectFrom('users').select(['id', 'quota as balance']).where('id', 'in', chunk).where('deleted_at', 'is', null).execute()
        : kind === 'token'
          ? await deps.db.selectFrom('tokens').select(['id', 'remain_quota as balance']).where('id', 'in', chunk).where('deleted_at', 'is', null).execute()
          // An item is worth what is left of it while its subscription is active, nothing after.
          : (await deps.db.selectFrom('user_subscription_items as i').innerJoin('user_subscriptions as s', 's.id', 'i.user_subscription_id')
              .select(['i.id', 'i.amount_total', 'i.amount_used', 's.status', 's.end_time']).where('i.id', 'in', chunk).execute())
              .map((r) => ({ id: r.id, balance: r.status === 'active' && r.end_time > Math.floor((deps.now?.() ?? Date.now()) / 1000) ? Math.max(0, r.amount_total - r.amount_used) : 0 }))
      for (const r of rows) truth.set(r.id, r.balance)
    }
    const after = await deps.quota.openReservations()
    for (const r of after) {
      const id = holder(kind, r)
      if (id !== undefined) busy.add(id)
    }
    for (const { id, userId, value } of cached) {
      result.checked++
      const expected = truth.get(id)
      if (expected === undefined) {
        await deps.quota.forget(kind, id, userId)
        continue
      }
      if (busy.has(id)) {
        result.busy++
        continue
      }
      if (expected !== value && await deps.quota.compareAndSet(kind, id, userId, value, expected)) result.repaired++
    }
  }
  return result
}
