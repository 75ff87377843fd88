import { randomInt } from 'node:crypto'
import { type CheckinResult, type CheckinStatusView, LOG_TYPE, type OptionValues } from '@modelgate/contracts'
import { checkinTotals, creditCheckinQuota, hasCheckedIn, insertCheckin, insertLog, listCheckins, type User } from '@modelgate/db'
import { CM } from '../lib/checkin-messages.js'
import { fail } from '../lib/errors.js'
import { M } from '../lib/messages.js'
import type { Deps } from './deps.js'
import { describeQuota } from './redemptions.js'

/**
 * The check-in day of `now`, 'YYYY-MM-DD'. The product has no time-zone setting, so days are UTC
 * days for every user: a day starts at 00:00 UTC.
 */
export const checkinDay = (now: Date): string => now.toISOString().slice(0, 10)

/** The first and last day of `month` ('YYYY-MM'). */
function monthDays (month: string): [string, string] {
  const [year = 1970, mon = 1] = month.split('-').map(Number)
  const last = new Date(Date.UTC(year, mon, 0)).getUTCDate()
  return [`${month}-01`, `${month}-${String(last).padStart(2, '0')}`]
}

/** Whether check-in is on, and the reward's bounds in quota units. */
export function checkinSettings (options: OptionValues): { enabled: boolean, min_quota: number, max_quota: number } {
  const min = Math.max(0, Math.floor(options.num('checkin_setting.min_quota')))
  // Each bound is saved on its own; should two saves cross (min above max), the reward is the minimum.
  const max = Math.max(min, Math.floor(options.num('checkin_setting.max_quota')))
  return { enabled: options.bool('checkin_setting.enabled'), min_quota: min, max_quota: max }
}

/** The settings and the user's check-ins: the records of `month` (default the current one) and all-time totals. */
export async function checkinStatus (deps: Deps<'db' | 'loadOptions'>, user: User, month: string | undefined, now = new Date()): Promise<CheckinStatusView> {
  const today = checkinDay(now)
  const [from, to] = monthDays(month ?? today.slice(0, 7))
  const [records, checkedInToday, totals] = await Promise.all([
    listCheckins(deps.db, user.id, from, to),
    hasCheckedIn(deps.db, user.id, today),
    checkinTotals(deps.db, user.id)
  ])
  return {
    ...checkinSettings(await deps.loadOptions()),
    stats: { checked_in_today: checkedInToday, records, checkin_count: records.length, ...totals }
  }
}

/**
 * Checks `user` in for today: records the day, credits a reward drawn uniformly from the
 * configured bounds and writes the recharge log in one transaction, then moves the cached
 * balance the gateways spend from, as redeeming a code does. The unique (user, day) row makes
 * concurrent attempts credit once; the others are refused as already checked in.
 */
export async function checkIn (deps: Deps<'db' | 'loadOptions' | 'quota' | 'publishChange'>, user: User, now = new Date()): Promise<CheckinResult> {
  const options = await deps.loadOptions()
  const settings = checkinSettings(options)
  if (!settings.enabled) throw fail(CM.checkinDisabled)
  const day = checkinDay(now)
  const quota = randomInt(settings.min_quota, settings.max_quota + 1)
  await deps.db.transaction().execute(async (trx) => {
    if (await insertCheckin(trx, user.id, day, quota) === undefined) throw fail(CM.alreadyCheckedIn)
    // Throwing rolls the day's row back, so a check-in is never recorded without its credit.
    const credited = await creditCheckinQuota(trx, user.id, quota)
    if (credited === undefined) throw fail(M.userNotFound)
    await insertLog(trx, {
      type: LOG_TYPE.topup,
      user_id: user.id,
      username: credited.username,
      quota,
      content: `Daily check-in: +${describeQuota(options, quota)}`
    })
  })
  await deps.quota.adjust('user', user.id, quota)
  await deps.publishChange({ kind: 'user', id: user.id })
  return { quota_awarded: quota, checkin_date: day }
}
