import type { StatusData } from '@modelgate/contracts'
import type { TFunction } from 'i18next'
import { renderNumber, renderQuota } from '../../lib/format'
import type { Plan, QuotaType } from './types'

/** A price in `currency` as the language writes it ($9.99, US$9.99); the plain number and code for a code Intl does not know. */
export function priceText (amount: number, currency: string, language: string): string {
  try {
    return new Intl.NumberFormat(language.startsWith('zh') ? 'zh-CN' : 'en-US', { style: 'currency', currency }).format(amount)
  } catch {
    return `${amount.toFixed(2)} ${currency}`
  }
}

const SPANS: Array<['day' | 'hour' | 'minute', number]> = [['day', 86_400], ['hour', 3600], ['minute', 60]]

/** One period of a plan: "1 month", "3 days", a custom length in the largest whole unit. */
export function durationText (plan: Pick<Plan, 'duration_unit' | 'duration_value' | 'custom_seconds'>, t: TFunction): string {
  let unit: string = plan.duration_unit
  let n = plan.duration_value
  if (plan.duration_unit === 'custom') {
    const span = SPANS.find(([, s]) => plan.custom_seconds % s === 0)
    unit = span?.[0] ?? 'second'
    n = plan.custom_seconds / (span?.[1] ?? 1)
  }
  return n === 1 ? t(`subscription.duration.one.${unit}`) : t(`subscription.duration.many.${unit}`, { n })
}

/** An entitlement's amount: quota as the console shows quota, requests as a count. */
export function amountText (kind: QuotaType, amount: number, status: Pick<StatusData, 'display_in_currency' | 'quota_per_unit'> | undefined, t: TFunction): string {
  return kind === 1 ? t('subscription.amount.requests', { n: renderNumber(amount) }) : t('subscription.amount.quota', { quota: renderQuota(amount, status) })
}

/** "gpt-4o: $5.00 quota". */
export function itemText (item: { model_name: string, quota_type: QuotaType, amount_total: number }, status: Pick<StatusData, 'display_in_currency' | 'quota_per_unit'> | undefined, t: TFunction): string {
  return `${item.model_name}: ${amountText(item.quota_type, item.amount_total, status, t)}`
}

/** An item's use: "$1.20 / $5.00", "3 / 100 requests". */
export function usageText (item: { quota_type: QuotaType, amount_used: number, amount_total: number }, status: Pick<StatusData, 'display_in_currency' | 'quota_per_unit'> | undefined, t: TFunction): string {
  return item.quota_type === 1
    ? t('subscription.mine.used', { used: renderNumber(item.amount_used), total: t('subscription.amount.requests', { n: renderNumber(item.amount_total) }) })
    : t('subscription.mine.used', { used: renderQuota(item.amount_used, status), total: renderQuota(item.amount_total, status) })
}
