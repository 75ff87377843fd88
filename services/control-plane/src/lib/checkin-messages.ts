import { defineMessages } from './i18n.js'

/** Daily check-in (docs/domain.md, "Daily check-in"). */
export const CM = defineMessages({
  checkinDisabled: { en: 'Daily check-in is not enabled by the administrator', zh: '管理员未开启每日签到' },
  alreadyCheckedIn: { en: 'You have already checked in today (days follow UTC)', zh: '今日已签到（按 UTC 时间计算日期）' },
  checkedIn: { en: 'Checked in: {quota} added to your balance', zh: '签到成功，余额增加 {quota}' }
})
