import { LOG_TYPE, type OptionValues, type TopUpListQuery, type TopUpPage, type TopUpSelfQuery, type TopUpView } from '@modelgate/contracts'
import { type Database, deductRefundedQuota, findTopUpByTradeNo, findUserById, insertLog, listTopUps, refundTopUp, type TopUp, type TopUpFilter, type Transaction, type User } from '@modelgate/db'
import { fail } from '../lib/errors.js'
import { pageOf } from '../lib/paging.js'
import { WM } from '../lib/wallet-messages.js'
import type { Deps } from './deps.js'
import { settleTopUp } from './epay.js'
import { describeQuota } from './redemptions.js'

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

/**
 * Records a refund (or a lost dispute) of the paid top-up `order` and, with `deduct` (the
 * provider's RefundDeductsQuota option), takes the credited quota back. The success to refunded
 * update decides, so of any number of such events for the order exactly one debits. `what` opens
 * the log row ("stripe refund", "creem refund", ...).
 */
export async function refundTopUpOrder (deps: Deps<'db' | 'quota' | 'publishChange'>, options: OptionValues, order: TopUp, what: string, deduct: boolean): Promise<void> {
  const done = await deps.db.transaction().execute(async (trx) => {
    const refunded = await refundTopUp(trx, order.trade_no, Math.floor(Date.now() / 1000))
    if (refunded === undefined) return undefined
    const user = deduct ? await deductRefundedQuota(trx, refunded.user_id, refunded.quota) : undefined
    await insertLog(trx, {
      type: LOG_TYPE.topup,
      user_id: refunded.user_id,
      username: user?.username ?? (await findUserById(trx, refunded.user_id))?.username ?? '',
      quota: 0,
      content: deduct && user !== undefined
        ? `${what}: order ${refunded.trade_no} (${refunded.money} ${refunded.currency ?? ''}), took back ${describeQuota(options, refunded.quota)}`
        : `${what}: order ${refunded.trade_no} (${refunded.money} ${refunded.currency ?? ''}) marked refunded, quota kept`
    })
    return user === undefined ? undefined : refunded
  })
  if (done === undefined) return
  await deps.quota.adjust('user', done.user_id, -done.quota)
  await deps.publishChange({ kind: 'user', id: done.user_id })
}
