import { type Database, type Kysely } from '@modelgate/db'
import type { QuotaStore } from '@modelgate/quota'

export interface ReconcileDeps {
  db: Kysely<Database>
  quota: QuotaStore
}

export interface ReconcileResult {
  checked: number
  repaired: number
  /** Skipped because a request of theirs was in flight. */
  busy: number
}

/**
 * A cached balance should equal the Postgres balance minus its open reservations. Only accounts
 * with no open reservation, before and after reading Postgres, are repaired, and only with a
 * compare-and-set: a request admitted meanwhile, or a settlement between its Postgres commit and
 * its Redis correction, makes the account busy or changes the value, and it is left for the next
 * run. Cached balances of deleted users or tokens are dropped.
 */
export async function run (deps: ReconcileDeps): Promise<ReconcileResult> {
  const result: ReconcileResult = { checked: 0, repaired: 0, busy: 0 }
  for (const kind of ['user', 'token'] as const) {
    const before = await deps.quota.openReservations()
    const busy = new Set(before.filter((r) => kind === 'user' || !r.unlimited).map((r) => kind === 'user' ? r.userId : r.tokenId))
    const cached = await deps.quota.cachedBalances(kind)
    const ids = [...cached.keys()]
    const truth = new Map<number, number>()
    for (let i = 0; i < ids.length; i += 1000) {
      const chunk = ids.slice(i, i + 1000)
      const rows = kind === 'user'
        ? await deps.db.selectFrom('users').select(['id', 'quota as balance']).where('id', 'in', chunk).where('deleted_at', 'is', null).execute()
        : await deps.db.selectFrom('tokens').select(['id', 'remain_quota as balance']).where('id', 'in', chunk).where('deleted_at', 'is', null).execute()
      for (const r of rows) truth.set(r.id, r.balance)
    }
    const after = await deps.quota.openReservations()
    for (const r of after) busy.add(kind === 'user' ? r.userId : r.tokenId)
    for (const [id, value] of cached) {
      result.checked++
      const expected = truth.get(id)
      if (expected === undefined) {
        await deps.quota.forget(kind, id)
        continue
      }
      if (busy.has(id)) {
        result.busy++
        continue
      }
      if (expected !== value && await deps.quota.compareAndSet(kind, id, value, expected)) result.repaired++
    }
  }
  return result
}
