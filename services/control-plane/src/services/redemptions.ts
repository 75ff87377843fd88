import { randomBytes } from 'node:crypto'
import {
  DEFAULT_REDEMPTION_QUOTA,
  LOG_TYPE,
  type OptionValues,
  REDEMPTION_BATCH_MAX,
  REDEMPTION_NAME_MAX,
  REDEMPTION_STATUS,
  type RedemptionCreateBody,
  type RedemptionPage,
  type RedemptionSearchQuery,
  type RedemptionUpdateBody,
  type RedemptionView
} from '@modelgate/contracts'
import {
  addUserQuota,
  claimRedemption,
  findRedemption,
  insertLog,
  insertRedemptions,
  listRedemptions,
  softDeleteRedemption,
  updateUnusedRedemption,
  type User
} from '@modelgate/db'
import { fail } from '../lib/errors.js'
import { M } from '../lib/messages.js'
import { pageOf } from '../lib/paging.js'
import { WM } from '../lib/wallet-messages.js'
import type { Deps } from './deps.js'

const nowSeconds = (): number => Math.floor(Date.now() / 1000)

/**
 * A quota as the console shows it: dollars ("$0.20") when the site displays currency and the
 * sum is at least a cent, else the raw number of units.
 */
export function describeQuota (options: OptionValues, quota: number): string {
  const dollars = quota / options.num('QuotaPerUnit')
  if (options.bool('DisplayInCurrencyEnabled') && dollars >= 0.01) return `$${dollars.toFixed(2)}`
  return String(quota)
}

/** A code is a bearer secret: 128 random bits as 32 hex characters. */
export const generateRedemptionKey = (): string => randomBytes(16).toString('hex')

/** The trimmed name, 1 to 20 characters; an empty one becomes the quota's description (docs/domain.md). */
function checkName (options: OptionValues, name: string | undefined, quota: number): string {
  const trimmed = name?.trim() ?? ''
  const value = trimmed === '' ? describeQuota(options, quota) : trimmed
  if ([...value].length > REDEMPTION_NAME_MAX) throw fail(WM.nameLength, { max: REDEMPTION_NAME_MAX })
  return value
}

function checkQuota (quota: number): number {
  if (!Number.isSafeInteger(quota) || quota < 1) throw fail(WM.quotaRange)
  return quota
}

export async function listRedemptionPage (deps: Deps<'db'>, q: RedemptionSearchQuery): Promise<RedemptionPage> {
  const { page, pageSize, offset } = pageOf(q)
  const { items, total } = await listRedemptions(deps.db, { keyword: q.keyword, offset, limit: pageSize })
  return { items, page, page_size: pageSize, total }
}

export async function getRedemption (deps: Deps<'db'>, id: number): Promise<RedemptionView> {
  const row = await findRedemption(deps.db, id)
  if (row === undefined) throw fail(WM.redemptionNotFound)
  return row
}

/** Creates `count` codes worth `quota` each; returns the new rows, codes included. */
export async function createRedemptions (deps: Deps<'db' | 'loadOptions'>, creator: User, body: RedemptionCreateBody): Promise<RedemptionView[]> {
  const count = body.count ?? 1
  if (!Number.isInteger(count) || count < 1 || count > REDEMPTION_BATCH_MAX) throw fail(WM.countRange, { max: REDEMPTION_BATCH_MAX })
  const quota = checkQuota(body.quota ?? DEFAULT_REDEMPTION_QUOTA)
  const name = checkName(await deps.loadOptions(), body.name, quota)
  const rows = Array.from({ length: count }, () => ({ user_id: creator.id, key: generateRedemptionKey(), name, quota }))
  return await insertRedemptions(deps.db, rows)
}

/** The refusal for a code the conditional update did not change: gone, or used meanwhile. */
async function refusal (deps: Deps<'db'>, id: number, whenUsed: typeof WM.usedCannotEdit): Promise<Error> {
  const row = await findRedemption(deps.db, id)
  return fail(row === undefined ? WM.redemptionNotFound : whenUsed)
}

/** Edits name and quota of an unused (or disabled) code; a used code is refused. */
export async function updateRedemption (deps: Deps<'db' | 'loadOptions'>, body: RedemptionUpdateBody): Promise<RedemptionView> {
  const before = await getRedemption(deps, body.id)
  if (before.status === REDEMPTION_STATUS.used) throw fail(WM.usedCannotEdit)
  const quota = body.quota === undefined ? undefined : checkQuota(body.quota)
  const name = body.name === undefined ? undefined : checkName(await deps.loadOptions(), body.name, quota ?? before.quota)
  if (name === undefined && quota === undefined) return before
  const after = await updateUnusedRedemption(deps.db, body.id, { name, quota })
  if (after === undefined) throw await refusal(deps, body.id, WM.usedCannotEdit)
  return after
}

/** Enables (1) or disables (2) a code that is not used. */
export async function setRedemptionStatus (deps: Deps<'db'>, id: number, status: number | undefined): Promise<RedemptionView> {
  if (status !== REDEMPTION_STATUS.unused && status !== REDEMPTION_STATUS.disabled) throw fail(WM.statusOneOrTwo)
  const after = await updateUnusedRedemption(deps.db, id, { status })
  if (after === undefined) throw await refusal(deps, id, WM.usedCannotChangeStatus)
  return after
}

export async function deleteRedemption (deps: Deps<'db'>, id: number): Promise<void> {
  if (!await softDeleteRedemption(deps.db, id, nowSeconds())) throw fail(WM.redemptionNotFound)
}

/**
 * Redeems `key` for `user`: marks the code used, credits its quota and writes the recharge log in
 * one transaction, then moves the cached balance the gateways spend from. Returns the quota
 * added. Unknown, disabled, used and deleted codes get the same answer, so the reply reveals
 * nothing about which codes exist.
 */
export async function redeemCode (deps: Deps<'db' | 'loadOptions' | 'quota' | 'publishChange'>, user: User, key: string): Promise<number> {
  const code = key.trim()
  if (code === '') throw fail(WM.keyEmpty)
  const options = await deps.loadOptions()
  const quota = await deps.db.transaction().execute(async (trx) => {
    const claimed = await claimRedemption(trx, code, user.id, nowSeconds())
    if (claimed === undefined) throw fail(WM.invalidCode)
    // Throwing rolls the claim back, so a code is never spent without its credit.
    const credited = await addUserQuota(trx, user.id, claimed.quota)
    if (credited === undefined) throw fail(M.userNotFound)
    await insertLog(trx, {
      type: LOG_TYPE.topup,
      user_id: user.id,
      username: credited.username,
      quota: claimed.quota,
      content: `redeemed code "${claimed.name}" (id ${claimed.id}) for ${describeQuota(options, claimed.quota)}`
    })
    return claimed.quota
  })
  await deps.quota.adjust('user', user.id, quota)
  await deps.publishChange({ kind: 'user', id: user.id })
  return quota
}
