import type { TopUpListQuery, TopUpPage, TopUpSelfQuery, TopUpView } from '@modelgate/contracts'
import { type Database, findTopUpByTradeNo, findUserById, listTopUps, type TopUp, type TopUpFilter, type Transaction, type User } from '@modelgate/db'
import { fail } from '../lib/errors.js'
import { pageOf } from '../lib/paging.js'
import { WM } from '../lib/wallet-messages.js'
import type { Deps } from './deps.js'
import { settleTopUp } from './epay.js'

const blank = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim())
const given = <T>(v: T | '' | undefined): T | undefined => (v === '' || v === 0 ? undefined : v)

/** The filters of a list query; `userId` pins the list to one user (a user's own orders). */
function filterOf (q: TopUpSelfQuery & { user_id?: number | '' }, userId?: number): TopUpFilter {
  return {
    keyword: blank(q.keyword),
    status: given(q.status),
    userId: userId ?? given(q.user_id),
    start: given(q.start_timestamp),
    end: given(q.end_timestamp)
  }
}

/** An order as the API shows it. */
export function topUpView (row: TopUp & { username: string }): TopUpView {
  return { ...row, money: String(row.money) }
}

/** A page of orders, newest first: every user's (admins), or `userId`'s own. */
export async function listTopUpPage (deps: Deps<'db'>, q: TopUpListQuery, userId?: number): Promise<TopUpPage> {
  const { page, pageSize, offset } = pageOf(q)
  const { items, total } = await listTopUps(deps.db, filterOf(q, userId), { offset, limit: pageSize })
  return { items: items.map(topUpView), page, page_size: pageSize, total }
}

/**
 * Completes the pending order `tradeNo` by hand, as a verified payment notification would: the
 * same settlement, so this and the provider's notification (early, late or concurrent) credit
 * the order once between them. `within` runs in the settling transaction (the audit entry).
 */
export async function completeTopUpByHand (
  deps: Deps<'db' | 'quota' | 'publishChange' | 'loadOptions'>,
  admin: User,
  tradeNo: string,
  within: (trx: Transaction<Database>, order: TopUp) => Promise<void>
): Promise<TopUpView> {
  const order = await findTopUpByTradeNo(deps.db, tradeNo.trim())
  if (order === undefined) throw fail(WM.topUpNotFound)
  if (order.status === 'success') throw fail(WM.topUpAlreadyCompleted)
  if (order.status !== 'pending') throw fail(WM.topUpNotPending)
  const settled = await settleTopUp(deps, await deps.loadOptions(), order.trade_no, { admin: admin.username }, within)
  // Settled meanwhile by a notification or another admin: nothing more to credit.
  if (settled === undefined) throw fail(WM.topUpAlreadyCompleted)
  const payer = await findUserById(deps.db, settled.user_id)
  return topUpView({ ...settled, username: payer?.username ?? '' })
}
